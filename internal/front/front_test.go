package front

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/taskprog"
	"github.com/nuv-dev/nuv/internal/version"
)

func TestLight(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		light bool
	}{
		{[]string{"nuv", "kube", "list"}, true},
		{[]string{"/usr/local/bin/nuv", "kube", "use", "2"}, true},
		{[]string{"nuv", "kube"}, true},
		{[]string{"nuv", "kube", "watch", "2"}, false}, // informers: the full program
		{[]string{"nuv.exe", "kube", "env"}, true},
		{[]string{"nuv", "-version"}, true},
		{[]string{"nuv", "--version"}, true},
		{[]string{"nuv", "-v"}, true},
		{[]string{"nuv"}, false},                             // the help lists the bundle: the full program's
		{[]string{"nuv", "cluster", "list"}, false},          // answerCluster, when every answer is on this machine
		{[]string{"nuv", "-task", "kube"}, false},            // go-task
		{[]string{"task", "kube"}, false},                    // the task named kube
		{[]string{"sh", "kube"}, false},                      // a tool link: its argument
		{[]string{"nuv-dev", "kube", "list"}, false},         // a renamed binary: the full program decides
		{[]string{"nuv", "kubectl"}, false},                  // a bundle folder, not `kube`
		{[]string{"nuv", "-verbose"}, false},                 // not -version
		{[]string{"nuv", "status"}, false},                   // not a daily verb of the front (yet)
		{[]string{"nuv", "operator", "kube", "list"}, false}, // a bundle task's argument
	} {
		if got := light(tc.args) != nil; got != tc.light {
			t.Errorf("light(%q) = %v, want %v", tc.args, got, tc.light)
		}
	}
}

func TestProgramCoversTheFullProgram(t *testing.T) {
	p := Program()
	for _, dir := range []string{"cmd/nuv-full", ".", "internal/app", "internal/cluster/eks", "olaris"} {
		if !p.Owns(dir) {
			t.Errorf("the full program's sources do not own %s", dir)
		}
	}
	for _, f := range []string{"go.mod", "go.sum", "cmd/nuv-full/main.go", "internal/app/app.go", "olaris/embed.go", "operator/config/crd/nuv.dev_whisks.yaml"} {
		if _, err := p.Sources.Open(f); err != nil {
			t.Errorf("%s is not among the embedded sources: %v", f, err)
		}
	}
	if !strings.Contains(p.Ldflags, "internal/version.Version="+version.Version) {
		t.Errorf("ldflags %q do not pass the front's version on", p.Ldflags)
	}
}

// TestAlsoProgramsWithinTheFullProgram: the programs built beside the full program import only
// packages the full program imports, but for their own: the task program none, the emulators'
// program the emulators (internal/emulator/...), which the full program does not link. Building
// them after the full program compiles those and nothing the full program compiled.
func TestAlsoProgramsWithinTheFullProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the programs' packages with the go command")
	}
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", "./"+pkg)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	full := map[string]bool{}
	for _, d := range deps("cmd/nuv-full") {
		full[d] = true
	}
	p := Program()
	if want := []string{"cmd/" + TaskName, "cmd/" + EmulatorName}; strings.Join(p.Also, " ") != strings.Join(want, " ") {
		t.Fatalf("Program().Also = %q, want the task program and the emulators' %q", p.Also, want)
	}
	own := map[string]string{"cmd/" + TaskName: "", "cmd/" + EmulatorName: "github.com/nuv-dev/nuv/internal/emulator/"}
	for _, also := range p.Also {
		var extra []string
		for _, d := range deps(also) {
			if !full[d] && d != "github.com/nuv-dev/nuv/"+also && (own[also] == "" || !strings.HasPrefix(d, own[also])) {
				extra = append(extra, d)
			}
		}
		if len(extra) > 0 {
			t.Errorf("%s imports %d packages the full program does not: %q", also, len(extra), extra)
		}
	}
}

// repoRoot is the module root (two levels up from this package).
func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// buildFront builds ./nuv (this front) as dir/nuv.
func buildFront(t *testing.T, dir string) string {
	t.Helper()
	exe := filepath.Join(dir, "nuv")
	cmd := exec.Command("go", "build", "-o", exe, "./nuv")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build nuv: %v\n%s", err, out)
	}
	return exe
}

type result struct {
	out, err string
	code     int
}

func run(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return result{out.String(), errb.String(), code}
}

// environ is the test's environment without the variables the test sets itself.
func environ(drop ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, d := range drop {
			keep = keep && !strings.HasPrefix(kv, d+"=")
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// TestIntegrationFront runs the built front: the daily verbs in its own process, everything else
// handed to the full program by exec with its streams, exit code and arguments (`nuv emulator`
// to the emulators' program beside it), and the full program taking the front as the `nuv` of
// tasks and child processes.
func TestIntegrationFront(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nuv and its full program: integration")
	}
	bin := t.TempDir()
	front := buildFront(t, bin)
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "clusters"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := environ(EnvFull, "NUV_FRONT", "KUBECONFIG", "NUV_CLUSTER")

	// The full program as users get it: built by the front from its embedded sources (a cache hit
	// once `bash hack/test.sh` or any earlier run built these sources).
	r := run(t, project, base, front, "-full")
	if r.code != 0 {
		t.Fatalf("nuv -full: exit %d\n%s", r.code, r.err)
	}
	full := strings.TrimSpace(r.out)
	if want := filepath.Join(companion.CacheDir(os.Getenv), "nuv-full"); !strings.HasPrefix(full, want+string(filepath.Separator)) || !companion.IsExecutable(full) {
		t.Fatalf("nuv -full = %q: want an executable under %s", full, want)
	}
	again := run(t, project, base, front, "-full")
	if strings.TrimSpace(again.out) != full || strings.Contains(again.err, "building") {
		t.Errorf("second nuv -full: %q (stderr %q), want %q from the front's record, nothing built", again.out, again.err, full)
	}

	// Daily verbs answer without the full program: a NUV_FULL that does not exist is never looked at.
	broken := append(append([]string(nil), base...), EnvFull+"="+filepath.Join(bin, "missing"))
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"-version"}, version.Version + "\n"},
		{[]string{"kube", "list", "--offline"}, "No clusters in"},
	} {
		r := run(t, project, broken, append([]string{front}, tc.args...)...)
		if r.code != 0 || !strings.Contains(r.out, tc.out) {
			t.Errorf("nuv %q: exit %d, stdout %q, stderr %q; want exit 0 and %q", tc.args, r.code, r.out, r.err, tc.out)
		}
	}
	// A daily verb's usage error: the same prefix and exit code as every group.
	if r := run(t, project, broken, front, "kube", "usee"); r.code != 2 || !strings.Contains(r.err, "nuv kube") || !strings.Contains(r.err, "use") {
		t.Errorf("nuv kube usee: exit %d, stderr %q; want exit 2 and a suggestion", r.code, r.err)
	}
	// Anything else needs the full program: a NUV_FULL that is not there is named. (`nuv cluster
	// list` without --refresh may be answered by the front from the state on this machine.)
	if r := run(t, project, broken, front, "cluster", "list", "--refresh"); r.code != 1 || !strings.Contains(r.err, "missing") || !strings.Contains(r.err, EnvFull) {
		t.Errorf("nuv cluster list --refresh with a missing NUV_FULL: exit %d, stderr %q; want exit 1 naming %s", r.code, r.err, EnvFull)
	}

	// Handed over: the full program's answers, streams and exit codes, as if run directly.
	withFull := append(append([]string(nil), base...), EnvFull+"="+full)
	for _, args := range [][]string{
		{"cluster"},         // group help: stdout, exit 0
		{"cluster", "lsit"}, // usage error: stderr, exit 2, a suggestion
		{"-sh", "-c", "exit 7"},
		{"-sh", "-c", "echo out; echo err >&2"},
	} {
		got := run(t, project, withFull, append([]string{front}, args...)...)
		// the full program run directly, named nuv as the front names it
		cmd := exec.Command(full, args...)
		cmd.Args[0] = front
		cmd.Dir, cmd.Env = project, base
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		if got.out != out.String() || got.err != errb.String() || got.code != code {
			t.Errorf("nuv %q through the front: exit %d, stdout %q, stderr %q; run directly: exit %d, stdout %q, stderr %q",
				args, got.code, got.out, got.err, code, out.String(), errb.String())
		}
	}
	// `nuv emulator` runs in the nuv-emulator built beside the full program, through the front and
	// through the full program run by name alike, as if nuv-emulator were run directly.
	emulator := filepath.Join(filepath.Dir(full), EmulatorName)
	emuHome := append(append([]string(nil), withFull...), "NUV_HOME="+t.TempDir())
	for _, args := range [][]string{
		{"emulator"},                     // group help: stdout, exit 0
		{"emulator", "statsu"},           // usage error: stderr, exit 2, a suggestion
		{"emulator", "status"},           // nothing runs: exit 1
		{"emulator", "status", "--help"}, // a verb's help
	} {
		direct := run(t, project, emuHome, append([]string{emulator}, args[1:]...)...)
		if direct.code == 0 && direct.out == "" {
			t.Errorf("nuv-emulator %q: exit 0 and no output", args[1:])
		}
		for _, via := range []string{front, full} {
			got := run(t, project, emuHome, append([]string{via}, args...)...)
			if got != direct {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; nuv-emulator run directly: exit %d, stdout %q, stderr %q",
					filepath.Base(via), args, got.code, got.out, got.err, direct.code, direct.out, direct.err)
			}
		}
	}
	// Tasks and child processes call the front, and NUV_FRONT reaches none of them.
	r = run(t, project, withFull, front, "-sh", "-c", `echo "${NUV_FRONT-unset}"; readlink -f "$(command -v nuv)"`)
	resolved, _ := filepath.EvalSymlinks(front)
	if want := "unset\n" + resolved + "\n"; r.code != 0 || r.out != want {
		t.Errorf("the nuv a task sees: exit %d, stdout %q (stderr %q), want %q", r.code, r.out, r.err, want)
	}
	// Run as `task` (a link to nuv), the front hands over to go-task.
	task := filepath.Join(bin, "task")
	if err := os.Symlink("nuv", task); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "Taskfile.yml"), []byte("version: '3'\ntasks:\n  kube:\n    silent: true\n    cmds: [echo the task named kube]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, project, withFull, task, "kube"); r.code != 0 || r.out != "the task named kube\n" {
		t.Errorf("task kube: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}

// TestRunsTaskfilesAgreesWithTheTaskProgram: the front (which must not link go-task) sends to the
// task program exactly the command lines the task program answers.
func TestRunsTaskfilesAgreesWithTheTaskProgram(t *testing.T) {
	for _, args := range [][]string{
		{"task"}, {"/usr/local/bin/task", "2"}, {"task.exe", "--list"}, {"nuv", "-task", "--version"},
		{"/opt/nuv/nuv", "--task"}, {"nuv", "cluster", "list"}, {"nuv", "kube"}, {"datefmt", "-task"},
	} {
		_, answers := taskprog.TaskArgs(args)
		if got := runsTaskfiles(args); got != answers {
			t.Errorf("runsTaskfiles(%q) = %v, but the task program answers it: %v", args, got, answers)
		}
	}
}
