package taskrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/shell"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// dryRuns is how many times each bundled task's dry run is repeated: go-task reads included
// Taskfiles concurrently, so a variable two of them define changes value between runs.
const dryRuns = 20

// stockRuns is how many times the stock go-task CLI repeats each dry run: enough to tell a change
// between runs that stock go-task shows too (a Taskfile's fault) from nuv's, and to compare nuv's
// output with stock go-task's. nuv's determinism is what dryRuns checks, in process; each stock run
// is a process start of about 70 ms of CPU (20 of them per task were 1,540 processes a run).
const stockRuns = 3

// bundledRoot is one Taskfile root nuv ships: the repository's Taskfile.yml with tasks/*.yml, or a
// folder of the embedded bundle (olaris/).
type bundledRoot struct {
	name  string
	dir   string // the directory go-task runs in
	flags []string
}

func bundledRoots(t *testing.T) []bundledRoot {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	roots := []bundledRoot{{name: "Taskfile.yml", dir: repo}}
	nuvfiles, err := filepath.Glob(filepath.Join(repo, "olaris", "*", "nuvfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	nuvfiles = append([]string{filepath.Join(repo, "olaris", "nuvfile.yml")}, nuvfiles...)
	for _, f := range nuvfiles {
		rel, _ := filepath.Rel(repo, f)
		roots = append(roots, bundledRoot{name: rel, dir: filepath.Dir(f), flags: []string{"-t", f}})
	}
	return roots
}

// dryRunCalls lists every task of a root (`--list-all --json`) as the words a user types: a
// wildcard task ("1*") is called with the numbers it stands for.
func dryRunCalls(t *testing.T, r bundledRoot) []string {
	t.Helper()
	out, errOut, code := nuvInProcess(r.dir, append(append([]string{}, r.flags...), "--list-all", "--json"))
	if code != 0 {
		t.Fatalf("%s: --list-all --json: exit %d\n%s", r.name, code, errOut)
	}
	var list struct {
		Tasks []struct {
			Name string `json:"name"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%s: task list: %v\n%s", r.name, err, out)
	}
	var calls []string
	for _, tk := range list.Tasks {
		if p, ok := strings.CutSuffix(tk.Name, "*"); ok {
			calls = append(calls, p, p+"2") // task 1 and task 12
			continue
		}
		calls = append(calls, tk.Name)
	}
	sort.Strings(calls)
	return calls
}

// nuvInProcess is `nuv -task args...` in dir, its stdout, stderr (with nuv's error line) and code.
func nuvInProcess(dir string, args []string) (string, string, int) {
	var out, errb bytes.Buffer
	exe, _ := os.Executable()
	env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.Quiet(),
		Exe: exe, Getenv: os.Getenv, Dir: dir}
	err := taskrun.Main(context.Background(), env, args, taskrun.Options{})
	if ee := (*cli.ExitError)(nil); err != nil && !(asExit(err, &ee) && ee.Err == nil) {
		fmt.Fprintf(&errb, "nuv: %v\n", err)
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

type result struct {
	out, err string
	code     int
}

// isolateTaskEnv keeps variables a user may have exported (NAME, F, ...) out of the templates:
// go-task exposes the environment to them.
func isolateTaskEnv(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("NUV_HOME", home)
	t.Setenv("NO_COLOR", "1")
	for _, k := range []string{"NAME", "F", "N", "NODES", "SPEC", "ONLY", "STACK", "ALL", "TF", "T", "C", "DRY_RUN", "TIMEOUT", "BASETAG", "P", "OUTPUT", "NUV_CLUSTER", "KUBECONFIG"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// TestIntegrationBundledDryRunsDeterministic runs each bundled task's dry run (`task -n TASK`)
// dryRuns times under nuv's embedded go-task and stockRuns times under the stock go-task CLI, and fails on any
// difference between runs (and, for tasks that dry-run cleanly, between nuv and stock go-task).
// The defaults issue 22 found changing between runs are asserted too.
func TestIntegrationBundledDryRunsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds the stock go-task CLI and runs thousands of dry runs")
	}
	stock := stockTask(t)
	isolateTaskEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	links, err := shell.LinkDir(os.Getenv("NUV_HOME"), exe, shell.DefaultLinks)
	if err != nil {
		t.Fatal(err)
	}
	procEnv := append(os.Environ(), "PATH="+shell.PrependPath(links, os.Getenv("PATH")))
	want := map[string]string{ // call -> a line its dry run must print, every time
		"local:create":  "nuv cluster create local --name 'local'",
		"local:delete":  "nuv cluster delete 'local'",
		"kind:delete":   "nuv cluster delete 'kind'",
		"kind:status":   "nuv cluster status 'kind'",
		"eks:create":    "nuv cluster apply -f 'clusters/specs/eks.yaml'",
		"eks:plan":      "nuv cluster plan -f 'clusters/specs/eks.yaml'",
		"cluster:plan":  "nuv cluster plan -f 'clusters/specs/dev.yaml'",
		"cluster:apply": "nuv cluster apply -f 'clusters/specs/dev.yaml'",
		"1":             "nuv kube use 1",
		"12":            "nuv kube use 12",
		"92":            "nuv kube use 92",
		"image-tag":     "nuv image tag --base '0.1.0-dev'",
	}
	total := 0
	for _, r := range bundledRoots(t) {
		start := time.Now()
		calls := dryRunCalls(t, r)
		if len(calls) == 0 {
			t.Fatalf("%s: no tasks listed", r.name)
		}
		for _, call := range calls {
			args := append(append([]string{}, r.flags...), "-n", call)
			var nuvRes, stockRes []result
			for range dryRuns {
				o, e, c := nuvInProcess(r.dir, args)
				nuvRes = append(nuvRes, result{o, strings.ReplaceAll(e, "nuv: task: ", "task: "), c})
			}
			stockRes = make([]result, stockRuns)
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8) // processes mostly wait on a busy machine
			for i := range stockRuns {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					o, e, c := runProc(t, stock, args, r.dir, procEnv)
					stockRes[i] = result{o, e, c}
				}()
			}
			wg.Wait()
			total += dryRuns + stockRuns
			for name, rs := range map[string][]result{"nuv": nuvRes, "stock go-task": stockRes} {
				for i, res := range rs[1:] {
					if res != rs[0] {
						t.Errorf("%s: %s: task %s: run %d differs from run 1\nrun 1: exit %d\n%s%s\nrun %d: exit %d\n%s%s",
							r.name, name, strings.Join(args, " "), i+2, rs[0].code, rs[0].out, rs[0].err, i+2, res.code, res.out, res.err)
						break
					}
				}
			}
			if nuvRes[0].code == 0 && nuvRes[0] != stockRes[0] {
				t.Errorf("%s: task %s: nuv and stock go-task differ\nnuv: exit %d\n%s%s\nstock: exit %d\n%s%s",
					r.name, strings.Join(args, " "), nuvRes[0].code, nuvRes[0].out, nuvRes[0].err, stockRes[0].code, stockRes[0].out, stockRes[0].err)
			}
			if w, ok := want[call]; ok && r.name == "Taskfile.yml" {
				delete(want, call)
				for name, res := range map[string]result{"nuv": nuvRes[0], "stock go-task": stockRes[0]} {
					if res.code != 0 || !strings.Contains(res.err, w) {
						t.Errorf("%s: task -n %s: exit %d, want %q in\n%s", name, call, res.code, w, res.err)
					}
				}
			}
		}
		t.Logf("%s: %d tasks, %d dry runs each under nuv and %d under stock go-task, %s", r.name, len(calls), dryRuns, stockRuns, time.Since(start).Round(time.Second))
	}
	for call := range want {
		t.Errorf("task %s is not among the root Taskfile's tasks", call)
	}
	t.Logf("%d dry runs", total)
}

// TestBundledSummaryOwnVarsOnly: `task --summary 1` shows no variable of an unrelated Taskfile
// (no included Taskfile sets file-level variables any more).
func TestBundledSummaryOwnVarsOnly(t *testing.T) {
	isolateTaskEnv(t)
	repo, _ := filepath.Abs("../..")
	out, errOut, code := nuvInProcess(repo, []string{"--summary", "1"})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "nuv kube use 1") {
		t.Errorf("summary of task 1 does not show its command:\n%s", out)
	}
	for _, m := range varLine.FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[1], "CLI_") && m[1] != "MATCH" {
			t.Errorf("summary of task 1 shows variable %s, not its own:\n%s", m[1], out)
		}
	}
}

var varLine = regexp.MustCompile(`(?m)^[ \t]+([A-Za-z_][A-Za-z0-9_]*):`)
