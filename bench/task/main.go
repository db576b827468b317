// Command task-bench measures nuv's task interpreter against the stock go-task CLI in the same
// run: it installs go-task v3.54.0 from the module proxy (GOBIN=<tmp> go install), builds nuv,
// then times, alternating the two programs, a trivial task under `nuv -task` and under `task`,
// plus `nuv -version` and a bundle dispatch `nuv <folder> <task>` (a tiny bundle via NUV_ROOT).
// It prints each median and the ratio nuv/task. Figures only: it asserts nothing.
//
// Usage (from the repository root): go run ./bench/task [-n RUNS]    (or bench/task/run.sh)
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
)

const taskVersion = benchutil.GoTaskVersion

func main() {
	runs := flag.Int("n", 40, "timed runs per program (after 3 warm-up runs)")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	flag.Parse()
	benchutil.Exit("task-bench", run(*runs, *keep))
}

func run(n int, keep bool) error {
	tmp, err := os.MkdirTemp("", "nuv-task-bench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "bin")
	task, err := benchutil.InstallGoTask(bin)
	if err != nil {
		return err
	}
	fmt.Println("building nuv...")
	nuv := filepath.Join(bin, "nuv")
	if err := benchutil.BuildNuv(nuv); err != nil {
		return err
	}

	// A project with a trivial task, and a tiny bundle with one folder and one task.
	proj := filepath.Join(tmp, "project")
	bundle := filepath.Join(tmp, "bundle")
	files := map[string]string{
		filepath.Join(proj, "Taskfile.yml"):           "version: '3'\ntasks:\n  hello:\n    silent: true\n    cmds:\n      - echo hello\n",
		filepath.Join(bundle, "nuvroot.json"):         `{"version": "0.0.1", "config": {}}` + "\n",
		filepath.Join(bundle, "bench", "nuvfile.yml"): "version: '3'\ntasks:\n  hello:\n    silent: true\n    cmds:\n      - echo hello\n",
		filepath.Join(bundle, "nuvfile.yml"):          "version: '3'\ntasks: {}\n",
		filepath.Join(tmp, "home", ".keep"):           "",
		filepath.Join(tmp, "nuvhome", "config.json"):  "{}\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return err
		}
	}
	env := append(os.Environ(), "NUV_HOME="+filepath.Join(tmp, "nuvhome"), "NUV_ROOT="+bundle, "NO_COLOR=1")

	type subject struct {
		label string
		argv  []string
		times []time.Duration
		err   error
	}
	subjects := []*subject{
		{label: "task hello (stock go-task " + taskVersion + ")", argv: []string{task, "hello"}},
		{label: "nuv -task hello", argv: []string{nuv, "-task", "hello"}},
		{label: "task --version (stock)", argv: []string{task, "--version"}},
		{label: "nuv -version", argv: []string{nuv, "-version"}},
		{label: "nuv bench hello (bundle dispatch)", argv: []string{nuv, "bench", "hello"}},
	}
	fmt.Printf("timing %d runs each (alternating programs, 3 warm-up runs)...\n", n)
	for i := -3; i < n; i++ {
		for _, s := range subjects {
			if s.err != nil {
				continue
			}
			d, out, err := timeOnce(s.argv, proj, env)
			if err != nil {
				s.err = fmt.Errorf("%v: %s", err, strings.TrimSpace(out))
				continue
			}
			if i >= 0 {
				s.times = append(s.times, d)
			}
		}
	}
	fmt.Println()
	for _, s := range subjects {
		if s.err != nil {
			fmt.Printf("%-42s skipped: %v\n", s.label, s.err)
			continue
		}
		m, lo, hi := benchutil.Stats(s.times)
		fmt.Printf("%-42s median %7.1f ms   (min %.1f, max %.1f, n=%d)\n", s.label, benchutil.MS(m), benchutil.MS(lo), benchutil.MS(hi), len(s.times))
	}
	fmt.Println()
	if subjects[0].err == nil && subjects[1].err == nil {
		a := benchutil.Median(subjects[1].times)
		b := benchutil.Median(subjects[0].times)
		fmt.Printf("ratio nuv -task / task (trivial task): %.2f   (target <= 1.0)\n", float64(a)/float64(b))
	}
	if subjects[3].err == nil {
		v := benchutil.Median(subjects[3].times)
		fmt.Printf("nuv -version median: %.1f ms   (target <= 20 ms)\n", benchutil.MS(v))
	}
	printInits(nuv, proj, env)
	if subjects[4].err == nil && subjects[0].err == nil {
		a := benchutil.Median(subjects[4].times)
		b := benchutil.Median(subjects[0].times)
		fmt.Printf("ratio bundle dispatch / task: %.2f\n", float64(a)/float64(b))
	}
	return nil
}

// printInits shows where nuv's start-up goes: package init time (GODEBUG=inittrace=1), the
// median of 9 runs in total and the heaviest packages of the median run.
func printInits(nuv, dir string, env []string) {
	type run struct {
		total float64
		pkgs  []string
	}
	var runs []run
	for i := 0; i < 9; i++ {
		cmd := exec.Command(nuv, "-version")
		cmd.Dir, cmd.Env = dir, append(env, "GODEBUG=inittrace=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return
		}
		var r run
		type pkg struct {
			name string
			ms   float64
		}
		var ps []pkg
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 6 && f[0] == "init" && f[5] == "ms" {
				var v float64
				fmt.Sscan(f[4], &v)
				r.total += v
				ps = append(ps, pkg{f[1], v})
			}
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].ms > ps[j].ms })
		for _, p := range ps[:min(4, len(ps))] {
			r.pkgs = append(r.pkgs, fmt.Sprintf("%s %.1f ms", p.name, p.ms))
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].total < runs[j].total })
	m := runs[len(runs)/2]
	fmt.Printf("nuv package init (GODEBUG=inittrace=1, median of 9): %.1f ms; heaviest: %s\n", m.total, strings.Join(m.pkgs, ", "))
}

func timeOnce(argv []string, dir string, env []string) (time.Duration, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return time.Since(start), string(out), err
}
