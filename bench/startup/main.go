// Command startup is the benchmark of nuv's start-up and daily verbs (issue "A CLI that answers
// before you notice"). For each command it runs one whole process at a time, alternating with
// its peer, and prints the median wall time, the median CPU time (user + system of the process
// and the children it waited for, from wait4's rusage) and the peak resident memory, beside the
// peer measured in the same run and the ratio nuv/peer:
//
//   - `nuv -version` (the slim front) against a Go hello world and the stock go-task CLI's
//     `task --version`, and the full program's `-version` (what every command paid when nuv was
//     one binary);
//   - `nuv kube list --offline` and `nuv kube list` over five kubeconfigs (their API servers are
//     loopback ports nothing listens on, so a probe is refused at once);
//   - `nuv kube use 2 --offline` against `kubectl config use-context` on the same kubeconfig;
//   - `task` (the project's default: the cluster list) and `task 2` (select cluster 2) in a
//     project with nuv's root Taskfile and tasks/, run by nuv's `task` and by the stock go-task
//     CLI on the same Taskfile (both call the same nuv for the commands inside); and what `task`
//     pays above the task program: nuv-task run directly against go-task, and `task --version`
//     through the slim nuv against nuv-task's own;
//   - `nuv emulator --help` through the slim nuv against nuv-emulator's own (the hand-over's cost);
//   - `nuv cluster list`, `nuv status` (handed to the full program);
//   - per shipped program (nuv, nuv-task, nuv-full, nuv-emulator) and go-task: the packages it links, its size,
//     its initialisers' clock and allocations (GODEBUG=inittrace=1) and its peak memory.
//
// It builds nuv from the checkout, gets the full program as users do (`nuv -full`: the cached
// build of the embedded sources) and installs go-task v3.54.0 with `go install`. Figures only:
// it asserts nothing.
//
// Usage (from the repository root): go run ./bench/startup [-n RUNS]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
)

func main() {
	runs := flag.Int("n", 20, "timed runs per command (after 2 warm-up runs)")
	flag.Parse()
	benchutil.Exit("bench/startup", run(*runs))
}

// sample is one measured process.
type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // KiB
}

// measure runs argv once (stdout and stderr discarded) and returns its figures; an exit code
// other than 0 and anyExit is an error.
func measure(dir string, env []string, argv []string, anyExit bool) (sample, error) {
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
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := sample{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru != nil {
		s.maxRSS = ru.Maxrss
	}
	return s, nil
}

// subject is a command and its figures.
type subject struct {
	label   string
	dir     string
	env     []string
	argv    []string
	anyExit bool // the command's exit code is not the point (a status that reports a cluster down)
	samples []sample
}

func (s *subject) median() sample {
	if len(s.samples) == 0 {
		return sample{}
	}
	walls := make([]time.Duration, len(s.samples))
	cpus := make([]time.Duration, len(s.samples))
	var rss []int64
	for i, x := range s.samples {
		walls[i], cpus[i] = x.wall, x.cpu
		rss = append(rss, x.maxRSS)
	}
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	return sample{wall: benchutil.Median(walls), cpu: benchutil.Median(cpus), maxRSS: rss[len(rss)-1]}
}

// pair is a nuv command and its peer (nil: none).
type pair struct {
	nuv, peer *subject
	target    string
}

func run(n int) error {
	tmp, err := os.MkdirTemp("", "nuv-bench-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	root, err := benchutil.ModuleRoot()
	if err != nil {
		return err
	}

	fmt.Println("building nuv (the slim front) ...")
	nuv := filepath.Join(bin, "nuv")
	if err := benchutil.BuildNuv(nuv); err != nil {
		return err
	}
	if err := os.Symlink("nuv", filepath.Join(bin, "task")); err != nil {
		return err
	}
	fmt.Println("the full program (nuv -full: the cached build of the embedded sources; built now if missing) ...")
	get := exec.Command(nuv, "-full")
	get.Env = append(without(os.Environ(), "NUV_FULL"), "NUV_FULL=")
	get.Stderr = os.Stderr
	out, err := get.Output()
	if err != nil {
		return fmt.Errorf("nuv -full: %w", err)
	}
	full := strings.TrimSpace(string(out))

	peers := filepath.Join(tmp, "peers")
	gotask, err := benchutil.InstallGoTask(peers)
	if err != nil {
		return err
	}
	fmt.Println("building a Go hello world ...")
	hello := filepath.Join(peers, "hello")
	helloSrc := filepath.Join(tmp, "hello", "main.go")
	if err := write(helloSrc, "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"); err != nil {
		return err
	}
	if err := write(filepath.Join(tmp, "hello", "go.mod"), "module hello\n\ngo 1.22\n"); err != nil {
		return err
	}
	hb := exec.Command("go", "build", "-o", hello, ".")
	hb.Dir = filepath.Dir(helloSrc)
	if out, err := hb.CombinedOutput(); err != nil {
		return fmt.Errorf("build hello: %v\n%s", err, out)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return fmt.Errorf("kubectl (the peer of `nuv kube use`) is not on PATH: %w", err)
	}

	// A project: nuv's root Taskfile and tasks/, five kubeconfigs whose servers refuse at once.
	project := filepath.Join(tmp, "project")
	home := filepath.Join(tmp, "home")
	if err := copyTree(filepath.Join(root, "Taskfile.yml"), filepath.Join(project, "Taskfile.yml")); err != nil {
		return err
	}
	if err := copyTree(filepath.Join(root, "tasks"), filepath.Join(project, "tasks")); err != nil {
		return err
	}
	for i, name := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		if err := write(filepath.Join(project, "clusters", name+".kubeconfig"), kubeconfig(name, 1+i)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env := append(without(os.Environ(), "NUV_FULL", "KUBECONFIG", "NUV_CLUSTER", "NUV_STATE", "HOME"),
		"HOME="+home, "NUV_FULL="+full, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1",
		"NUV_CACHE_DIR="+filepathCache())
	gotaskEnv := env
	kcfg := filepath.Join(project, "clusters", "bravo.kubeconfig")
	kubectlEnv := append(append([]string(nil), env...), "KUBECONFIG="+filepath.Join(tmp, "kubectl.kubeconfig"))
	if err := copyTree(kcfg, filepath.Join(tmp, "kubectl.kubeconfig")); err != nil {
		return err
	}

	// the task program started as the slim nuv starts it (NUV_FRONT names the nuv its tasks call),
	// without the slim nuv's process
	nuvTask := filepath.Join(filepath.Dir(full), "nuv-task")
	// the emulators' program, built beside the full program (it links no emulator)
	nuvEmulator := filepath.Join(filepath.Dir(full), "nuv-emulator")
	direct := append(append([]string(nil), env...), "NUV_FRONT="+nuv)
	s := func(label string, e []string, argv ...string) *subject {
		return &subject{label: label, dir: project, env: e, argv: argv}
	}
	// nuv status of a selected cluster that refuses: exit 1, which is right and not measured here.
	status := s("nuv status (selected cluster down)", env, nuv, "status")
	status.anyExit = true
	pairs := []pair{
		{s("nuv -version", env, nuv, "-version"), s("Go hello world", env, hello), "<= 15 ms CPU"},
		{s("nuv -version", env, nuv, "-version"), s("go-task: task --version", env, gotask, "--version"), ""},
		{s("full program -version (nuv as one binary)", env, full, "-version"), s("go-task: task --version", env, gotask, "--version"), "(before)"},
		{s("nuv kube list --offline", env, nuv, "kube", "list", "--offline"), s("Go hello world", env, hello), "<= 15 ms CPU"},
		{s("nuv kube list (5 clusters probed)", env, nuv, "kube", "list"), nil, ""},
		{s("nuv kube use 2 --offline", env, nuv, "kube", "use", "2", "--offline"), s("kubectl config use-context", kubectlEnv, kubectl, "config", "use-context", "bravo"), "<= 15 ms CPU"},
		{s("task (nuv)", env, filepath.Join(bin, "task")), s("task (go-task)", gotaskEnv, gotask), "<= 1.0x go-task (goal 0.5x)"},
		{s("task 2 (nuv)", env, filepath.Join(bin, "task"), "2"), s("task 2 (go-task)", gotaskEnv, gotask, "2"), "<= 1.0x go-task (goal 0.5x)"},
		// what `task` costs above the task program: the slim nuv's start and hand-over
		{s("task (nuv-task run directly: no hand-over)", direct, nuvTask), s("task (go-task)", gotaskEnv, gotask), "(the task program alone)"},
		{s("task --version (nuv, then nuv-task)", env, filepath.Join(bin, "task"), "--version"), s("nuv-task --version (no hand-over)", direct, nuvTask, "--version"), "(the hand-over's cost)"},
		{s("nuv emulator --help (nuv, then nuv-emulator)", env, nuv, "emulator", "--help"), s("nuv-emulator --help (no hand-over)", env, nuvEmulator, "--help"), "(the hand-over's cost)"},
		{s("nuv cluster list", env, nuv, "cluster", "list"), nil, "<= 150 ms"},
		{status, nil, "<= 100 ms"},
	}
	for _, p := range pairs {
		for i := 0; i < n+2; i++ {
			for _, sub := range []*subject{p.nuv, p.peer} {
				if sub == nil {
					continue
				}
				x, err := measure(sub.dir, sub.env, sub.argv, sub.anyExit)
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
	fmt.Println("| command | wall | CPU | peak RSS | peer | peer wall | peer CPU | peer RSS | ratio wall | ratio CPU | target |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range pairs {
		m := p.nuv.median()
		row := fmt.Sprintf("| %s | %.1f ms | %.1f ms | %.0f MiB |", p.nuv.label, benchutil.MS(m.wall), benchutil.MS(m.cpu), float64(m.maxRSS)/1024)
		if p.peer != nil {
			q := p.peer.median()
			row += fmt.Sprintf(" %s | %.1f ms | %.1f ms | %.0f MiB | %.2f | %.2f |", p.peer.label, benchutil.MS(q.wall), benchutil.MS(q.cpu), float64(q.maxRSS)/1024,
				ratio(m.wall, q.wall), ratio(m.cpu, q.cpu))
		} else {
			row += " - | - | - | - | - | - |"
		}
		fmt.Println(row + " " + p.target + " |")
	}
	return programs(root, n, env, []program{
		{"nuv (the slim front)", "./nuv", nuv, []string{"nuv", "-version"}},
		{"nuv-task (task, nuv -task)", "./cmd/nuv-task", nuvTask, []string{"nuv", "-version"}},
		{"nuv-full (everything else)", "./cmd/nuv-full", full, []string{"nuv", "-version"}},
		{"nuv-emulator (nuv emulator)", "./cmd/nuv-emulator", nuvEmulator, []string{"nuv", "-version"}},
		{"go-task v3.54.0 (peer)", "", gotask, []string{"task", "--version"}},
	})
}

// program is one shipped program (or a peer) whose start is measured on its own.
type program struct {
	label, pkg, path string
	argv             []string // argv[0] is the name it runs under
}

// programs prints, per program, the packages it links (go list -deps; "-" for a peer), its size,
// the packages whose initialisers ran and their clock and allocations (GODEBUG=inittrace=1, the
// median of n runs of its version command) and the peak memory of that run.
func programs(root string, n int, env []string, progs []program) error {
	fmt.Printf("\nPer program (its version command, %d runs, medians; init: the initialisers' own clock and allocations from GODEBUG=inittrace=1)\n\n", n)
	fmt.Println("| program | packages linked | packages with init work | size | init clock | init allocations | peak RSS |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, p := range progs {
		linked := "-"
		if p.pkg != "" {
			cmd := exec.Command("go", "list", "-deps", p.pkg)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("go list -deps %s: %w", p.pkg, err)
			}
			linked = fmt.Sprint(strings.Count(string(out), "\n"))
		}
		st, err := os.Stat(p.path)
		if err != nil {
			return fmt.Errorf("%s: %w", p.label, err)
		}
		var clocks, allocs []float64
		var rss []int64
		inits := 0
		for i := 0; i < n; i++ {
			cmd := exec.Command(p.path, p.argv[1:]...)
			cmd.Args[0] = p.argv[0]
			cmd.Env = append(append([]string(nil), env...), "GODEBUG=inittrace=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s %v: %w\n%s", p.label, p.argv, err, stderr.String())
			}
			clock, bytes, count := initTrace(stderr.String())
			clocks, allocs, inits = append(clocks, clock), append(allocs, bytes), count
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss = append(rss, ru.Maxrss)
			}
		}
		fmt.Printf("| %s | %s | %d | %.0f MiB | %.1f ms | %.1f MiB | %.0f MiB |\n", p.label, linked, inits,
			float64(st.Size())/(1<<20), medianOf(clocks), medianOf(allocs)/(1<<20), float64(medianInt(rss))/1024)
	}
	return nil
}

// initTrace sums an inittrace's lines ("init PKG @T ms, C ms clock, B bytes, A allocs"): the
// initialisers' clock in ms, their allocated bytes, and how many packages ran one.
func initTrace(trace string) (clock, bytes float64, count int) {
	for _, line := range strings.Split(trace, "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		var c, b float64
		if _, err := fmt.Sscan(f[4], &c); err != nil {
			continue
		}
		if _, err := fmt.Sscan(f[7], &b); err != nil {
			continue
		}
		clock, bytes, count = clock+c, bytes+b, count+1
	}
	return clock, bytes, count
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// filepathCache is the cache nuv uses outside the benchmark's HOME, so the full program and the
// companions built before are found.
func filepathCache() string {
	if d := os.Getenv("NUV_CACHE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nuv")
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".cache", "nuv")
}

// kubeconfig is a kubeconfig whose API server is a loopback port nothing listens on.
func kubeconfig(name string, i int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: https://127.0.0.1:%[2]d
    insecure-skip-tls-verify: true
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: %[1]s}
current-context: %[1]s
users:
- name: %[1]s
  user: {token: bench}
`, name, 1+i)
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

func write(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// copyTree copies the file or directory src to dst.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return errors.New(p + ": not a regular file")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return write(target, string(data))
	})
}
