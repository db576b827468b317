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
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	fmt.Println("building nuv (the slim front) ...")
	nuv := filepath.Join(bin, "nuv")
	if err := benchutil.BuildNuv(nuv); err != nil {
		return err
	}
	fmt.Println("the full program (nuv -full, or $NUV_FULL) ...")
	full := os.Getenv("NUV_FULL")
	if full == "" {
		get := exec.Command(nuv, "-full")
		get.Stderr = os.Stderr
		out, err := get.Output()
		if err != nil {
			return fmt.Errorf("nuv -full: %w", err)
		}
		full = strings.TrimSpace(string(out))
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return fmt.Errorf("kubectl (the peer) is not on PATH: %w", err)
	}

	fresh := home == ""
	if fresh {
		home, project = filepath.Join(tmp, "home"), filepath.Join(tmp, "project")
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
	base := append(without(os.Environ(), "NUV_FULL", "KUBECONFIG", "NUV_CLUSTER", "NUV_STATE", "NUV_HOME", "NO_COLOR", "AWS_PROFILE"),
		"NUV_HOME="+home, "NUV_FULL="+full, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	nuvRun := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(nuv, args...)
		cmd.Dir, cmd.Env = project, env
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("nuv %s: %w\n%s", strings.Join(args, " "), err, errb.String())
		}
		return string(out), nil
	}

	if fresh {
		if err := os.MkdirAll(filepath.Join(project, "specs"), 0o755); err != nil {
			return err
		}
		// The operator's sources, so `nuv operator` deploys this checkout's and `nuv status` finds
		// its Deployments.
		root, err := benchutil.ModuleRoot()
		if err != nil {
			return err
		}
		for _, f := range []string{"go.mod", "go.sum", "operator"} {
			if err := os.Symlink(filepath.Join(root, f), filepath.Join(project, f)); err != nil {
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
		if err := os.WriteFile(filepath.Join(home+".ports"), []byte(strings.Join(ports, "\n")+"\n"), 0o644); err != nil && keep {
			return err
		}
		base = append(base, ports...)
	} else if data, err := os.ReadFile(home + ".ports"); err == nil {
		base = append(base, strings.Fields(string(data))...)
	}
	if fresh {
		fmt.Println("starting nuv's emulators ...")
		if _, err := nuvRun(base, "emulator", "up"); err != nil {
			return err
		}
	}
	envOut, err := nuvRun(base, "emulator", "env")
	if err != nil {
		return err
	}
	env := append([]string(nil), base...)
	for _, line := range strings.Split(envOut, "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			env = append(env, kv)
		}
	}
	if fresh && !keep {
		defer func() {
			fmt.Println("deleting the clusters and stopping the emulators ...")
			if _, err := nuvRun(env, "cluster", "delete", "--all", "--yes"); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
			if _, err := nuvRun(env, "emulator", "down"); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}()
	}
	if fresh {
		for _, c := range [][]string{{"local", "alpha"}, {"local", "bravo"}, {"eks", "charlie"}} {
			fmt.Printf("creating %s cluster %s ...\n", c[0], c[1])
			if _, err := nuvRun(env, "cluster", "create", c[0], c[1]); err != nil {
				return err
			}
		}
		for _, c := range []struct{ name, spec string }{{"delta", aksSpec}, {"echo", gkeSpec}} {
			fmt.Printf("creating cluster %s ...\n", c.name)
			f := filepath.Join(project, "specs", c.name+".yaml")
			if err := os.WriteFile(f, []byte(c.spec), 0o644); err != nil {
				return err
			}
			if _, err := nuvRun(env, "cluster", "apply", "-f", f, "--yes"); err != nil {
				return err
			}
		}
	}
	if keep {
		fmt.Printf("kept: go run ./bench/dailyverbs -home %s -project %s\n", home, project)
	}
	// nuv status looks at the selected cluster: alpha.
	if _, err := nuvRun(env, "kube", "use", "alpha"); err != nil {
		return err
	}
	if fresh {
		fmt.Println("deploying the operator on alpha (nuv operator) ...")
		if _, err := nuvRun(env, "operator"); err != nil {
			return err
		}
	}
	list, err := nuvRun(env, "cluster", "list")
	if err != nil {
		return err
	}
	fmt.Print("\n", list)

	var kubeconfigs []string
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		kubeconfigs = append(kubeconfigs, filepath.Join(project, "clusters", name+".kubeconfig"))
	}
	kubectlAll := append(append([]string(nil), env...), "KUBECONFIG="+strings.Join(kubeconfigs, string(os.PathListSeparator)))
	kubectlAlpha := append(append([]string(nil), env...), "KUBECONFIG="+kubeconfigs[0])

	s := func(label string, e []string, argv ...string) *subject {
		return &subject{label: label, env: e, argv: argv}
	}
	readyz := func() *subject {
		return s("kubectl get --raw /readyz (alpha)", kubectlAlpha, kubectl, "get", "--raw", "/readyz")
	}
	getContexts := func() *subject {
		return s("kubectl config get-contexts (5 kubeconfigs)", kubectlAll, kubectl, "config", "get-contexts")
	}
	status := s("nuv status (alpha selected; operator deployed)", env, nuv, "status")
	fullStatus := s("nuv-full status (the full program run directly: before)", env, full, "status")
	pairs := []struct {
		nuv, peer *subject
		target    string
	}{
		{s("nuv cluster list", env, nuv, "cluster", "list"), getContexts(), "<= 150 ms"},
		{s("nuv cluster list --refresh (every cloud asked)", env, nuv, "cluster", "list", "--refresh"), getContexts(), "-"},
		{s("nuv cluster status alpha (local)", env, nuv, "cluster", "status", "alpha"), readyz(), "<= 150 ms"},
		{s("nuv cluster status charlie (eks)", env, nuv, "cluster", "status", "charlie"), readyz(), "<= 150 ms"},
		{status, readyz(), "<= 100 ms"},
		{fullStatus, readyz(), "-"},
	}
	if _, err := nuvRun(env, "cluster", "list", "--refresh"); err != nil {
		// Before --refresh existed: the first pair's command again.
		pairs[1].nuv = s("nuv cluster list (no --refresh in this nuv)", env, nuv, "cluster", "list")
	}
	for _, p := range pairs {
		for i := 0; i < n+2; i++ {
			for _, sub := range []*subject{p.nuv, p.peer} {
				x, err := measure(project, sub.env, sub.argv, sub.anyExit)
				if err != nil {
					return err
				}
				if i >= 2 { // two warm-up runs
					sub.samples = append(sub.samples, x)
				}
			}
		}
	}
	fmt.Printf("\n%d runs each (medians; CPU is user+system of the process and the children it waited for; RSS the peak)\n\n", n)
	fmt.Println("| command | answered by | wall | CPU | peak RSS | peer | peer wall | peer CPU | ratio wall | ratio CPU | target (wall) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range pairs {
		m, q := p.nuv.median(), p.peer.median()
		fmt.Printf("| %s | %s | %.1f ms | %.1f ms | %.0f MiB | %s | %.1f ms | %.1f ms | %.2f | %.2f | %s |\n",
			p.nuv.label, answeredBy(project, p.nuv, tmp), benchutil.MS(m.wall), benchutil.MS(m.cpu), float64(m.maxRSS)/1024,
			p.peer.label, benchutil.MS(q.wall), benchutil.MS(q.cpu), ratio(m.wall, q.wall), ratio(m.cpu, q.cpu), p.target)
	}
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("\nload average at the end: %s", l)
	}
	return nil
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
