// Command cluster is the benchmark of nuv's local clusters against kwokctl (sigs.k8s.io/kwok, the
// peer that runs the same kind of cluster: control-plane processes on the host, kwok fake nodes),
// measured in the same run. For each of RUNS runs, the two alternate:
//
//	create   seconds from the create command until 3 nodes are Ready: `nuv cluster create local
//	         --nodes 3` (it returns with the nodes Ready); `kwokctl create cluster --runtime binary`
//	         then `kwokctl scale node --replicas 3`, waited for with client-go until the 3 nodes are Ready
//	deploy   seconds until a 10-replica Deployment has all 10 replicas available (status
//	         availableReplicas, updatedReplicas and readyReplicas all 10; not the Available condition,
//	         which the controller sets as soon as the minimum is met)
//	rss      total VmRSS of the cluster's processes (MB); pss: proportional set size, shared pages split
//	         between processes (the honest sum); unique: anonymous memory of all processes plus the
//	         largest resident file mapping once
//
// kwokctl runs the very binaries nuv runs: kube-apiserver, kube-controller-manager and
// kube-scheduler are nuv's companion binary (nuv-kube) under those names; etcd and kwok-controller
// are two small adapter scripts that exec nuv-kube's etcd (upstream etcd flags turned into the etcd
// configuration file it reads) and kwok. kwokctl is built from source once (`go install
// sigs.k8s.io/kwok/cmd/kwokctl@<the kwok version in go.mod>`) into nuv's cache, keyed by that
// version and the Go version.
//
// Then nuv with --ha (no peer: kwokctl's binary runtime has no HA control plane), and start-up:
// median of `nuv -version` against `nuv-kube version` and their max RSS (from rusage).
//
// Run from the repository root: go run ./bench/cluster [-runs 3]
// Needs only Go: the companion binary is built by `nuv cluster prepare` when missing (NUV_KUBE_BIN
// names a prebuilt one).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/kube"
)

func main() {
	runs := flag.Int("runs", 3, "runs per cluster kind")
	nuvBin := flag.String("nuv", "", "prebuilt nuv (default: build ./nuv)")
	kwokctlBin := flag.String("kwokctl", "", "prebuilt kwokctl (default: build it once into nuv's cache)")
	ha := flag.Bool("ha", true, "also measure nuv with --ha")
	flag.Parse()
	if err := run(*runs, *nuvBin, *kwokctlBin, *ha); err != nil {
		fmt.Fprintln(os.Stderr, "bench/cluster:", err)
		os.Exit(1)
	}
}

// result is one run of one tool.
type result struct {
	create, deploy   time.Duration
	rss, pss, unique int // MB
}

type bench struct {
	work, nuv, kube, kwokctl string
	env                      []string
}

func run(runs int, nuvBin, kwokctlBin string, ha bool) error {
	work, err := os.MkdirTemp("", "nuv-bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &bench{work: work}
	b.env = append(os.Environ(), "NUV_HOME="+filepath.Join(work, "home"), "NUV_PROJECT="+filepath.Join(work, "project"),
		"KWOK_WORKDIR="+filepath.Join(work, "kwok"), "NUV_CLUSTER=")
	os.MkdirAll(filepath.Join(work, "project"), 0o755)
	if nuvBin == "" {
		nuvBin = filepath.Join(work, "nuv")
		fmt.Println("building nuv ...")
		if err := benchutil.BuildNuv(nuvBin); err != nil {
			return err
		}
	}
	b.nuv = nuvBin
	out, err := b.cmd(b.nuv, "cluster", "prepare")
	if err != nil {
		return fmt.Errorf("nuv cluster prepare: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	fields := strings.Split(lines[len(lines)-1], "\t")
	b.kube = strings.TrimSpace(fields[len(fields)-1])
	if _, err := os.Stat(b.kube); err != nil {
		return fmt.Errorf("nuv cluster prepare printed %q, not the companion binary: %v", out, err)
	}
	fmt.Println("nuv-kube:", b.kube)
	if kwokctlBin == "" {
		if kwokctlBin, err = ensureKwokctl(); err != nil {
			return err
		}
	}
	b.kwokctl = kwokctlBin
	fmt.Println("kwokctl:", b.kwokctl)
	adapters, err := b.adapters()
	if err != nil {
		return err
	}
	defer b.cleanup()

	fmt.Printf("== local clusters, 3 nodes, %d runs each, alternating (seconds, MB); targets: create <= 6 s, deploy <= 3 s, memory <= 700 MB\n", runs)
	fmt.Printf("%-8s %-4s %8s %8s %8s %8s %8s\n", "cluster", "run", "create", "deploy", "rss", "pss", "unique")
	var nuvR, kwokR []result
	for i := 1; i <= runs; i++ {
		r, err := b.nuvRun(fmt.Sprintf("b%d", i))
		if err != nil {
			return err
		}
		nuvR = append(nuvR, r)
		print("nuv", i, r)
		r, err = b.kwokRun(fmt.Sprintf("k%d", i), adapters)
		if err != nil {
			return err
		}
		kwokR = append(kwokR, r)
		print("kwokctl", i, r)
	}
	var haR []result
	if ha {
		for i := 1; i <= runs; i++ {
			r, err := b.nuvRun(fmt.Sprintf("h%d", i), "--ha")
			if err != nil {
				return err
			}
			haR = append(haR, r)
			print("nuv-ha", i, r)
		}
	}
	n, k := summary(nuvR), summary(kwokR)
	fmt.Println()
	fmt.Println("| cluster (3 kwok nodes) | create to nodes Ready | 10/10 replicas available | RSS | PSS | unique |")
	fmt.Println("|---|---|---|---|---|---|")
	row := func(label string, s result) {
		fmt.Printf("| %s | %.2f s | %.2f s | %d MB | %d MB | %d MB |\n", label, s.create.Seconds(), s.deploy.Seconds(), s.rss, s.pss, s.unique)
	}
	row("nuv cluster create local", n)
	row("kwokctl --runtime binary (same binaries)", k)
	if ha {
		row("nuv cluster create local --ha", summary(haR))
	}
	fmt.Printf("| ratio nuv/kwokctl | %.2f | %.2f | %.2f | %.2f | %.2f |\n", ratio(n.create, k.create), ratio(n.deploy, k.deploy),
		float64(n.rss)/float64(k.rss), float64(n.pss)/float64(k.pss), float64(n.unique)/float64(k.unique))
	fmt.Printf("(medians of %d runs; memory medians per column)\n", runs)
	return b.startup()
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func print(label string, i int, r result) {
	fmt.Printf("%-8s %-4d %8.2f %8.2f %8d %8d %8d\n", label, i, r.create.Seconds(), r.deploy.Seconds(), r.rss, r.pss, r.unique)
}

// summary is the median of each column.
func summary(rs []result) result {
	var c, d []time.Duration
	var rss, pss, uniq []time.Duration
	for _, r := range rs {
		c, d = append(c, r.create), append(d, r.deploy)
		rss, pss, uniq = append(rss, time.Duration(r.rss)), append(pss, time.Duration(r.pss)), append(uniq, time.Duration(r.unique))
	}
	return result{create: benchutil.Median(c), deploy: benchutil.Median(d), rss: int(benchutil.Median(rss)), pss: int(benchutil.Median(pss)), unique: int(benchutil.Median(uniq))}
}

func (b *bench) cmd(name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Env = b.env
	out, err := c.CombinedOutput()
	return string(out), err
}

func (b *bench) nuvRun(name string, flags ...string) (result, error) {
	var r result
	start := time.Now()
	if out, err := b.cmd(b.nuv, append([]string{"cluster", "create", "local", "--name", name, "--nodes", "3"}, flags...)...); err != nil {
		return r, fmt.Errorf("nuv cluster create %s: %v\n%s", name, err, out)
	}
	r.create = time.Since(start)
	defer b.cmd(b.nuv, "cluster", "delete", name)
	kc := filepath.Join(b.work, "project", "clusters", name+".kubeconfig")
	cs, err := client(kc)
	if err != nil {
		return r, err
	}
	if err := nodesReady(cs, 3, time.Minute); err != nil { // nuv returns with them Ready: a check, ~0 s
		return r, fmt.Errorf("nuv cluster %s: %w", name, err)
	}
	if r.deploy, err = deploy(cs); err != nil {
		return r, fmt.Errorf("nuv cluster %s: %w", name, err)
	}
	r.rss, r.pss, r.unique, err = memory(filepath.Join(b.work, "home", "clusters", name, "pids"))
	return r, err
}

func (b *bench) kwokRun(name string, adapters map[string]string) (result, error) {
	var r result
	args := []string{"create", "cluster", "--name", name, "--runtime", "binary", "--quiet-pull",
		"--etcd-binary", adapters["etcd"],
		"--kube-apiserver-binary", b.kube,
		"--kube-controller-manager-binary", b.kube,
		"--kube-scheduler-binary", b.kube,
		"--kwok-controller-binary", adapters["kwok-controller"],
		"--wait", "5m"}
	start := time.Now()
	if out, err := b.cmd(b.kwokctl, args...); err != nil {
		b.cmd(b.kwokctl, "delete", "cluster", "--name", name)
		return r, fmt.Errorf("kwokctl create cluster %s: %v\n%s", name, err, out)
	}
	defer b.cmd(b.kwokctl, "delete", "cluster", "--name", name)
	if out, err := b.cmd(b.kwokctl, "scale", "node", "--name", name, "--replicas", "3"); err != nil {
		return r, fmt.Errorf("kwokctl scale node %s: %v\n%s", name, err, out)
	}
	dir := filepath.Join(b.work, "kwok", "clusters", name)
	cs, err := client(filepath.Join(dir, "kubeconfig.yaml"))
	if err != nil {
		return r, err
	}
	if err := nodesReady(cs, 3, 5*time.Minute); err != nil {
		return r, fmt.Errorf("kwokctl cluster %s: %w", name, err)
	}
	r.create = time.Since(start)
	if r.deploy, err = deploy(cs); err != nil {
		return r, fmt.Errorf("kwokctl cluster %s: %w", name, err)
	}
	r.rss, r.pss, r.unique, err = memory(filepath.Join(dir, "pids"))
	return r, err
}

func (b *bench) cleanup() {
	b.cmd(b.nuv, "cluster", "delete", "--all", "--yes")
	out, _ := b.cmd(b.kwokctl, "get", "clusters")
	for _, n := range strings.Fields(out) {
		b.cmd(b.kwokctl, "delete", "cluster", "--name", n)
	}
}

func client(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return kubernetes.NewForConfig(cfg)
}

// nodesReady waits until n nodes are Ready.
func nodesReady(cs *kubernetes.Clientset, n int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	for {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			ready := 0
			for i := range nodes.Items {
				if kube.NodeReady(&nodes.Items[i]) {
					ready++
				}
			}
			if ready >= n {
				return nil
			}
			last = fmt.Sprintf("%d of %d nodes Ready", ready, len(nodes.Items))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d nodes not Ready after %s: %s", n, timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deploy creates a 10-replica Deployment and returns the time until all 10 replicas are available.
func deploy(cs *kubernetes.Clientset) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	replicas := int32(10)
	labels := map[string]string{"app": "bench"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	start := time.Now()
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create the Deployment: %w", err)
	}
	var last string
	for {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, "bench", metav1.GetOptions{})
		if err == nil {
			s := got.Status
			if s.ObservedGeneration >= got.Generation && s.AvailableReplicas == 10 && s.UpdatedReplicas == 10 && s.ReadyReplicas == 10 {
				return time.Since(start), nil
			}
			last = fmt.Sprintf("available %d, updated %d, ready %d of 10", s.AvailableReplicas, s.UpdatedReplicas, s.ReadyReplicas)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("Deployment not 10/10 available in 2m: %s", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// memory sums the memory of the processes recorded in a pids directory ("PID ..." files, as nuv
// and kwokctl both write them): RSS and PSS summed, anonymous memory summed plus the largest
// resident file mapping once (every nuv component maps the same binary).
func memory(pidDir string) (rss, pss, unique int, err error) {
	files, err := filepath.Glob(filepath.Join(pidDir, "*.pid"))
	if err != nil || len(files) == 0 {
		return 0, 0, 0, fmt.Errorf("no pid files in %s", pidDir)
	}
	var anon, file int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, 0, 0, err
		}
		pid, err := strconv.Atoi(strings.Fields(string(data) + " x")[0])
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %w", f, err)
		}
		st, err := benchutil.ProcFields(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("process of %s: %w", f, err)
		}
		sm, err := benchutil.ProcFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("process of %s: %w", f, err)
		}
		rss += int(st["VmRSS"])
		pss += int(sm["Pss"])
		anon += int(st["RssAnon"])
		file = max(file, int(st["RssFile"]))
	}
	return rss / 1024, pss / 1024, (anon + file) / 1024, nil
}

// startup compares nuv's start-up with the companion's (a binary that links the control plane),
// alternating them so that load from other work hits both alike.
func (b *bench) startup() error {
	var nt, kt []time.Duration
	var nrss, krss int64
	for i := 0; i < 31; i++ {
		for _, c := range []struct {
			bin, arg string
			ds       *[]time.Duration
			rss      *int64
		}{{b.nuv, "-version", &nt, &nrss}, {b.kube, "version", &kt, &krss}} {
			cmd := exec.Command(c.bin, c.arg)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s %s: %w", c.bin, c.arg, err)
			}
			*c.ds = append(*c.ds, time.Since(start))
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				*c.rss = max(*c.rss, ru.Maxrss) // KB on Linux
			}
		}
	}
	n, k := benchutil.Median(nt), benchutil.Median(kt)
	fmt.Printf("\n== start-up, median of 31 (ms): nuv -version %.1f, nuv-kube version %.1f (links the control plane); ratio nuv-kube/nuv %.2f\n",
		benchutil.MS(n), benchutil.MS(k), float64(k)/float64(n))
	fmt.Printf("== start-up max RSS (MB): nuv -version %d, nuv-kube version %d\n", nrss/1024, krss/1024)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("== load average during the run: %s on %d cores\n", strings.Join(strings.Fields(string(load))[:3], " "), runtime.NumCPU())
	return nil
}

// ensureKwokctl returns kwokctl built from the kwok version nuv's go.mod requires, building it once
// into $NUV_CACHE_DIR (default ~/.cache/nuv)/kwokctl/<kwok version>-<go version>/.
func ensureKwokctl() (string, error) {
	root, err := benchutil.ModuleRoot()
	if err != nil {
		return "", err
	}
	c := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/kwok")
	c.Dir = root
	v, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("kwok version in go.mod: %w", err)
	}
	version := strings.TrimSpace(string(v))
	cache := os.Getenv("NUV_CACHE_DIR")
	if cache == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(uc, "nuv")
	}
	dir := filepath.Join(cache, "kwokctl", version+"-"+runtime.Version())
	bin := filepath.Join(dir, "kwokctl")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Printf("building kwokctl %s (once; cached in %s) ...\n", version, dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-kwokctl-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// built as its own module (its go.sum), not inside nuv's: kwokctl needs modules nuv does not
	install := exec.Command("go", "install", "sigs.k8s.io/kwok/cmd/kwokctl@"+version)
	install.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-mod=mod")
	install.Dir = tmp
	if out, err := install.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kwokctl %s: %v\n%s", version, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(bin); serr != nil {
			return "", fmt.Errorf("publish kwokctl: %w", err)
		}
	}
	return bin, nil
}

// adapters writes the two adapter scripts that let kwokctl run nuv-kube's etcd and kwok with the
// command lines it gives the upstream binaries.
func (b *bench) adapters() (map[string]string, error) {
	root, err := benchutil.ModuleRoot()
	if err != nil {
		return nil, err
	}
	c := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "go.etcd.io/etcd/server/v3")
	c.Dir = root
	v, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("etcd version in go.mod: %w", err)
	}
	etcdVersion := strings.TrimPrefix(strings.TrimSpace(string(v)), "v")
	dir := filepath.Join(b.work, "adapters")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	scripts := map[string]string{
		// etcd flags ("--key=value", "--flag") become the keys of etcd's configuration file, which
		// has the flags' names; values that are numbers stay numbers, except the duration-like
		// auto-compaction-retention, which etcd reads as a string
		"etcd": fmt.Sprintf(`#!/bin/sh
case "$1" in --version|version) echo "etcd Version: %s"; exit 0;; esac
cfg=$(mktemp %q)
for a in "$@"; do
  k=${a%%%%=*}; k=${k#--}
  case "$a" in *=*) v=${a#*=} ;; *) v=true ;; esac
  case "$k:$v" in
    auto-compaction-retention:*) printf "%%s: '%%s'\n" "$k" "$v" ;;
    *:true|*:false) printf '%%s: %%s\n' "$k" "$v" ;;
    *) case "$v" in ''|*[!0-9]*) printf "%%s: '%%s'\n" "$k" "$v" ;; *) printf '%%s: %%s\n' "$k" "$v" ;; esac ;;
  esac
done >"$cfg"
exec %q etcd --config "$cfg"
`, etcdVersion, filepath.Join(dir, "etcd-config.XXXXXX"), b.kube),
		"kwok-controller": fmt.Sprintf("#!/bin/sh\nexec %q kwok \"$@\"\n", b.kube),
	}
	out := map[string]string{}
	for name, body := range scripts {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}
