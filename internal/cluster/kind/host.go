package kind

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Host is what the node configuration must adapt to on the machine the nodes run on.
type Host struct {
	// CgroupV1: the host mounts cgroup v1 (no /sys/fs/cgroup/cgroup.controllers); kubelet 1.35+
	// refuses to start there unless its configuration says failCgroupV1: false.
	CgroupV1 bool
	// NoSysResource: CAP_SYS_RESOURCE is not in the host's bounding set, so a container cannot
	// lower its OOM score below the runtime's own; containerd in the node must not ask for it
	// (restrict_oom_score_adj) or every pod sandbox fails to start.
	NoSysResource bool
}

// capSysResource is CAP_SYS_RESOURCE's bit in the capability sets (linux/capability.h).
const capSysResource = 24

// DetectHost reads the host facts from /sys and /proc.
func DetectHost() Host {
	var h Host
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		h.CgroupV1 = true
	}
	if bnd, ok := capBounding("/proc/self/status"); ok {
		h.NoSysResource = bnd&(1<<capSysResource) == 0
	}
	return h
}

// capBounding reads CapBnd from a /proc/PID/status file.
func capBounding(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapBnd:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}
