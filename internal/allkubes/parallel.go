package allkubes

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// What one run of a target costs this machine, for --parallel auto. A run on a local cluster
// works this machine twice: the child nuv (the test client, a host-run operator) and the
// cluster's own control plane (apiserver, etcd, controllers) that the run wakes up from idle. A
// run on a remote cluster costs only the child process, mostly waiting on the network.
const (
	localRunsPerCore = 3         // local runs are mostly waiting on the control plane's reconcile loops
	localRunMemory   = 400 << 20 // child nuv + the busy control plane's growth over idle
	remoteRunMemory  = 150 << 20 // child nuv only
	maxRemoteRuns    = 64
)

// slots bounds concurrent runs: local for runs on nuv's local clusters (their control planes run
// on this machine), remote for the others.
type slots struct {
	local, remote chan struct{}
	why           string
}

// autoSlots picks the concurrency from the cores, the memory available and how many clusters are
// local or remote: local runs are bounded by CPU (localRunsPerCore a core) and memory, remote runs
// by memory only.
func autoSlots(cores int, available uint64, nLocal, nRemote int) (local, remote int) {
	local = cores * localRunsPerCore
	if m := int(available / localRunMemory); m < local {
		local = m
	}
	local = max(1, min(local, max(nLocal, 1)))
	remote = maxRemoteRuns
	if m := int(available / remoteRunMemory); m < remote {
		remote = m
	}
	remote = max(1, min(remote, max(nRemote, 1)))
	return local, remote
}

func newSlots(o *Options, clusters []Cluster) *slots {
	if !o.AutoParallel {
		s := make(chan struct{}, o.Parallel)
		return &slots{local: s, remote: s}
	}
	nLocal := 0
	for _, c := range clusters {
		if o.isLocal(c) {
			nLocal++
		}
	}
	avail := memAvailable()
	l, r := autoSlots(runtime.NumCPU(), avail, nLocal, len(clusters)-nLocal)
	return &slots{local: make(chan struct{}, l), remote: make(chan struct{}, r),
		why: fmt.Sprintf("--parallel auto: %d runs at once on local clusters (%d of them; %d cores, %.1f GB available), %d on remote ones (%d)",
			l, nLocal, runtime.NumCPU(), float64(avail)/(1<<30), r, len(clusters)-nLocal)}
}

// isLocal tells, without the network, whether c is one of nuv's local clusters: its state is in
// NUV_HOME and its kubeconfig is the one there recorded. (After the probe the nodes say it too.)
func (o *Options) isLocal(c Cluster) bool {
	s, ok := readLocalState(o.Home, c.Name)
	return ok && (s.Kubeconfig == "" || s.Kubeconfig == c.Kubeconfig)
}

// memAvailable reads MemAvailable from /proc/meminfo (4 GiB when it cannot).
func memAvailable() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 4 << 30
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			if kb, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 4 << 30
}

// ParseParallel reads --parallel: "auto" or a number of runs at once (0: all at once).
func ParseParallel(v string) (n int, auto bool, err error) {
	if v == "auto" {
		return 0, true, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("--parallel %q: use auto or a number (0: every cluster at once)", v)
	}
	return n, false, nil
}
