// Command dailyverbs is the benchmark of the cluster verbs a developer types all day (issue "A CLI
// that answers before you notice", goal 2): `nuv cluster list`, `nuv cluster status NAME` and
// `nuv status`, with five clusters of mixed providers — two local clusters (real control planes,
// kwok nodes) and an EKS, an AKS and a GKE cluster made against nuv's emulators (each a real local
// control plane behind the emulated cloud API).
//
// For each verb it runs one whole process at a time, alternating with its peer, and prints which
// program answered it (the slim nuv in its own process, or nuv's full program it hands over to),
// the median wall time, the median CPU time (user + system of the process and the children it waited
// for, from wait4's rusage: the machine is shared, so CPU is the steadier figure) and the peak
// resident memory, beside the peer measured in the same run and the ratio nuv/peer:
//
//   - `nuv cluster list` (cloud answers from nuv's cache) and `nuv cluster list --refresh`
//     (every cloud asked) against `kubectl config get-contexts` over the five kubeconfigs;
//   - `nuv cluster status` of a local and of a cloud cluster against `kubectl get --raw /readyz`
//     on the local cluster;
//   - `nuv status` (the operator and its Whisks on the selected cluster, a local one, where the
//     setup deploys the operator of this checkout with `nuv operator`) against the same readyz
//     probe, and beside it nuv's full program run directly (`nuv-full status`: what `nuv status`
//     cost before the slim nuv answered it, measured in the same run under the same load).
//
// It builds nuv from the checkout and gets the full program as users do (`nuv -full`, or
// $NUV_FULL), sets up the clusters in a scratch NUV_HOME and project (about three minutes) and
// deletes them at the end. -home and -project reuse a setup kept with -keep. Figures only: it
// asserts nothing.
//
// Usage (from the repository root): go run ./bench/dailyverbs [-n RUNS] [-keep] [-home DIR -project DIR]
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
)

func main() {
	runs := flag.Int("n", 15, "timed runs per command (after 2 warm-up runs)")
	keep := flag.Bool("keep", false, "keep the emulators and clusters (print -home and -project to reuse them)")
	home := flag.String("home", "", "reuse the NUV_HOME of a kept setup")
	project := flag.String("project", "", "reuse the project of a kept setup")
	flag.Parse()
	benchutil.Exit("bench/dailyverbs", run(*runs, *keep, *home, *project))
}

// sample is one measured process.
type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // KiB
}

// measure runs argv once (stdout discarded) and returns its figures; an exit code other than 0 is
// an error unless anyExit.
func measure(dir string, env, argv []string, anyExit bool) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var errb strings.Builder
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var ee *exec.ExitError
	if err != nil && !(anyExit && errors.As(err, &ee)) {
		return sample{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, errb.String())
	}
	s := sample{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.maxRSS = ru.Maxrss
	}
	return s, nil
}

// subject is a command and its figures.
type subject struct {
	label   string
	env     []string
	argv    []string
	anyExit bool
	samples []sample
}

func (s *subject) median() sample {
	walls := make([]time.Duration, len(s.samples))
	cpus := make([]time.Duration, len(s.samples))
	var rss []int64
	for i, x := range s.samples {
		walls[i], cpus[i] = x.wall, x.cpu
		rss = append(rss, x.maxRSS)
	}
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	m := sample{wall: benchutil.Median(walls), cpu: benchutil.Median(cpus)}
	if len(rss) > 0 {
		m.maxRSS = rss[len(rss)-1]
	}
	return m
}

func run(n int, keep bool, home, project string) error {
	tmp, err := os.MkdirTemp("", "nuv-bench-dailyverbs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b, err := buildPrograms(tmp)
	if err != nil {
		return err
	}
	if err := b.chooseHome(keep, home, project); err != nil {
		return err
	}
	if err := b.prepareProject(); err != nil {
		return err
	}
	if err := b.startEmulators(); err != nil {
		return err
	}
	if b.fresh && !keep {
		defer b.teardown()
	}
	if err := b.setUpClusters(); err != nil {
		return err
	}
	pairs := b.pairs()
	if err := measurePairs(pairs, n, b.project); err != nil {
		return err
	}
	b.printTable(pairs, n)
	return nil
}

// bench is one run's programs, scratch NUV_HOME and project, and the environments the measured
// commands run in.
type bench struct {
	tmp, bin           string // scratch directory and the directory nuv is built into
	nuv, full, kubectl string // the programs measured
	home, project      string
	fresh, keep        bool     // fresh: the setup is made (and, unless keep, deleted) by this run
	base               []string // the environment before the emulators' variables
	env                []string // base with the emulators' variables
}

// buildPrograms builds nuv into tmp/bin, gets the full program (nuv -full, or $NUV_FULL) and finds
// kubectl, the peer.
func buildPrograms(tmp string) (*bench, error) {
	b := &bench{tmp: tmp, bin: filepath.Join(tmp, "bin")}
	if err := os.MkdirAll(b.bin, 0o755); err != nil {
		return nil, err
	}
	fmt.Println("building nuv (the slim front) ...")
	b.nuv = filepath.Join(b.bin, "nuv")
	if err := benchutil.BuildNuv(b.nuv); err != nil {
		return nil, err
	}
	fmt.Println("the full program (nuv -full, or $NUV_FULL) ...")
	b.full = os.Getenv("NUV_FULL")
	if b.full == "" {
		get := exec.Command(b.nuv, "-full")
		get.Stderr = os.Stderr
		out, err := get.Output()
		if err != nil {
			return nil, fmt.Errorf("nuv -full: %w", err)
		}
		b.full = strings.TrimSpace(string(out))
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return nil, fmt.Errorf("kubectl (the peer) is not on PATH: %w", err)
	}
	b.kubectl = kubectl
	return b, nil
}

// chooseHome sets the NUV_HOME and project: those of a kept setup when home is given, else fresh
// ones in the scratch directory (or in their own temporary directories when keep), and the base
// environment the commands run in.
func (b *bench) chooseHome(keep bool, home, project string) error {
	var err error
	b.keep = keep
	b.fresh = home == ""
	if b.fresh {
		home, project = filepath.Join(b.tmp, "home"), filepath.Join(b.tmp, "project")
		if keep {
			if home, err = os.MkdirTemp("", "nuv-dailyverbs-home-"); err != nil {
				return err
			}
			if project, err = os.MkdirTemp("", "nuv-dailyverbs-project-"); err != nil {
				return err
			}
		}
	} else if project == "" {
		return errors.New("-home needs -project")
	}
	b.home, b.project = home, project
	b.base = append(without(os.Environ(), "NUV_FULL", "KUBECONFIG", "NUV_CLUSTER", "NUV_STATE", "NUV_HOME", "NO_COLOR", "AWS_PROFILE"),
		"NUV_HOME="+home, "NUV_FULL="+b.full, "PATH="+b.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	return nil
}

// nuvRun runs nuv with args in the project and returns its standard output.
func (b *bench) nuvRun(env []string, args ...string) (string, error) {
	cmd := exec.Command(b.nuv, args...)
	cmd.Dir, cmd.Env = b.project, env
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("nuv %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return string(out), nil
}

// prepareProject makes a fresh project (specs directory, links to the operator's sources) and picks
// the emulators' ports, kept beside NUV_HOME; a reused setup reads its ports back.
func (b *bench) prepareProject() error {
	if !b.fresh {
		if data, err := os.ReadFile(b.home + ".ports"); err == nil {
			b.base = append(b.base, strings.Fields(string(data))...)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Join(b.project, "specs"), 0o755); err != nil {
		return err
	}
	// The operator's sources, so `nuv operator` deploys this checkout's and `nuv status` finds
	// its Deployments.
	root, err := benchutil.ModuleRoot()
	if err != nil {
		return err
	}
	for _, f := range []string{"go.mod", "go.sum", "operator"} {
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(b.project, f)); err != nil {
			return err
		}
	}
	var ports []string
	for _, k := range []string{"NUV_EMULATOR_PORT", "NUV_AZURE_EMULATOR_PORT", "NUV_EMULATOR_GCP_PORT"} {
		p, err := freePort()
		if err != nil {
			return err
		}
		ports = append(ports, k+"="+strconv.Itoa(p))
	}
	if err := os.WriteFile(filepath.Join(b.home+".ports"), []byte(strings.Join(ports, "\n")+"\n"), 0o644); err != nil && b.keep {
		return err
	}
	b.base = append(b.base, ports...)
	return nil
}

// startEmulators starts nuv's emulators for a fresh setup and sets env to the base environment
// with the variables `nuv emulator env` exports.
func (b *bench) startEmulators() error {
	if b.fresh {
		fmt.Println("starting nuv's emulators ...")
		if _, err := b.nuvRun(b.base, "emulator", "up"); err != nil {
			return err
		}
	}
	envOut, err := b.nuvRun(b.base, "emulator", "env")
	if err != nil {
		return err
	}
	b.env = append([]string(nil), b.base...)
	for _, line := range strings.Split(envOut, "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			b.env = append(b.env, kv)
		}
	}
	return nil
}

// teardown deletes the clusters and stops the emulators, printing what fails.
func (b *bench) teardown() {
	fmt.Println("deleting the clusters and stopping the emulators ...")
	if _, err := b.nuvRun(b.env, "cluster", "delete", "--all", "--yes"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if _, err := b.nuvRun(b.env, "emulator", "down"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

// setUpClusters creates the five clusters of a fresh setup, selects alpha, deploys the operator on
// it and prints `nuv cluster list`.
func (b *bench) setUpClusters() error {
	env := b.env
	if b.fresh {
		for _, c := range [][]string{{"local", "alpha"}, {"local", "bravo"}, {"eks", "charlie"}} {
			fmt.Printf("creating %s cluster %s ...\n", c[0], c[1])
			if _, err := b.nuvRun(env, "cluster", "create", c[0], c[1]); err != nil {
				return err
			}
		}
		for _, c := range []struct{ name, spec string }{{"delta", aksSpec}, {"echo", gkeSpec}} {
			fmt.Printf("creating cluster %s ...\n", c.name)
			f := filepath.Join(b.project, "specs", c.name+".yaml")
			if err := os.WriteFile(f, []byte(c.spec), 0o644); err != nil {
				return err
			}
			if _, err := b.nuvRun(env, "cluster", "apply", "-f", f, "--yes"); err != nil {
				return err
			}
		}
	}
	if b.keep {
		fmt.Printf("kept: go run ./bench/dailyverbs -home %s -project %s\n", b.home, b.project)
	}
	// nuv status looks at the selected cluster: alpha.
	if _, err := b.nuvRun(env, "kube", "use", "alpha"); err != nil {
		return err
	}
	if b.fresh {
		fmt.Println("deploying the operator on alpha (nuv operator) ...")
		if _, err := b.nuvRun(env, "operator"); err != nil {
			return err
		}
	}
	list, err := b.nuvRun(env, "cluster", "list")
	if err != nil {
		return err
	}
	fmt.Print("\n", list)
	return nil
}

// pair is a nuv command, the peer measured beside it and its wall-time target.
type pair struct {
	nuv, peer *subject
	target    string
}

// pairs lists the nuv commands measured and their peers; a nuv without --refresh measures the plain
// list twice.
func (b *bench) pairs() []pair {
	env := b.env
	var kubeconfigs []string
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		kubeconfigs = append(kubeconfigs, filepath.Join(b.project, "clusters", name+".kubeconfig"))
	}
	kubectlAll := append(append([]string(nil), env...), "KUBECONFIG="+strings.Join(kubeconfigs, string(os.PathListSeparator)))
	kubectlAlpha := append(append([]string(nil), env...), "KUBECONFIG="+kubeconfigs[0])

	s := func(label string, e []string, argv ...string) *subject {
		return &subject{label: label, env: e, argv: argv}
	}
	readyz := func() *subject {
		return s("kubectl get --raw /readyz (alpha)", kubectlAlpha, b.kubectl, "get", "--raw", "/readyz")
	}
	getContexts := func() *subject {
		return s("kubectl config get-contexts (5 kubeconfigs)", kubectlAll, b.kubectl, "config", "get-contexts")
	}
	status := s("nuv status (alpha selected; operator deployed)", env, b.nuv, "status")
	fullStatus := s("nuv-full status (the full program run directly: before)", env, b.full, "status")
	pairs := []pair{
		{s("nuv cluster list", env, b.nuv, "cluster", "list"), getContexts(), "<= 150 ms"},
		{s("nuv cluster list --refresh (every cloud asked)", env, b.nuv, "cluster", "list", "--refresh"), getContexts(), "-"},
		{s("nuv cluster status alpha (local)", env, b.nuv, "cluster", "status", "alpha"), readyz(), "<= 150 ms"},
		{s("nuv cluster status charlie (eks)", env, b.nuv, "cluster", "status", "charlie"), readyz(), "<= 150 ms"},
		{status, readyz(), "<= 100 ms"},
		{fullStatus, readyz(), "-"},
	}
	if _, err := b.nuvRun(env, "cluster", "list", "--refresh"); err != nil {
		// Before --refresh existed: the first pair's command again.
		pairs[1].nuv = s("nuv cluster list (no --refresh in this nuv)", env, b.nuv, "cluster", "list")
	}
	return pairs
}

// measurePairs runs each pair's commands alternately n times after two warm-up runs, in dir, and
// keeps the samples.
func measurePairs(pairs []pair, n int, dir string) error {
	for _, p := range pairs {
		for i := 0; i < n+2; i++ {
			for _, sub := range []*subject{p.nuv, p.peer} {
				x, err := measure(dir, sub.env, sub.argv, sub.anyExit)
				if err != nil {
					return err
				}
				if i >= 2 { // two warm-up runs
					sub.samples = append(sub.samples, x)
				}
			}
		}
	}
	return nil
}

// printTable prints the medians of each pair as a Markdown table, then the load average.
func (b *bench) printTable(pairs []pair, n int) {
	fmt.Printf("\n%d runs each (medians; CPU is user+system of the process and the children it waited for; RSS the peak)\n\n", n)
	fmt.Println("| command | answered by | wall | CPU | peak RSS | peer | peer wall | peer CPU | ratio wall | ratio CPU | target (wall) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range pairs {
		m, q := p.nuv.median(), p.peer.median()
		fmt.Printf("| %s | %s | %.1f ms | %.1f ms | %.0f MiB | %s | %.1f ms | %.1f ms | %.2f | %.2f | %s |\n",
			p.nuv.label, answeredBy(b.project, p.nuv, b.tmp), benchutil.MS(m.wall), benchutil.MS(m.cpu), float64(m.maxRSS)/1024,
			p.peer.label, benchutil.MS(q.wall), benchutil.MS(q.cpu), ratio(m.wall, q.wall), ratio(m.cpu, q.cpu), p.target)
	}
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("\nload average at the end: %s", l)
	}
}

// answeredBy says which program answers sub: the slim nuv answers in its own process and never
// looks at $NUV_FULL, so a run with NUV_FULL naming a missing file tells them apart.
func answeredBy(dir string, sub *subject, tmp string) string {
	cmd := exec.Command(sub.argv[0], sub.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(without(sub.env, "NUV_FULL"), "NUV_FULL="+filepath.Join(tmp, "no-full-program"))
	var errb strings.Builder
	cmd.Stderr = &errb
	_ = cmd.Run()
	if filepath.Base(sub.argv[0]) != "nuv" || strings.Contains(errb.String(), "NUV_FULL=") {
		return "full program"
	}
	return "slim nuv"
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func without(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && k != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// aksSpec and gkeSpec are the two clusters made by spec (the shorthand create covers eks).
const aksSpec = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: delta
spec:
  provider: aks
  region: eastus
  kubernetesVersion: "1.35"
  nodeGroups:
  - name: system
    count: 1
    instanceType: Standard_D2s_v3
  aks:
    resourceGroup: delta-rg
`

const gkeSpec = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: echo
spec:
  provider: gke
  kubernetesVersion: "1.35"
  nodeGroups:
  - name: workers
    count: 1
    instanceType: e2-standard-4
  gke:
    project: nuv-emulator
    location: us-central1-a
`
