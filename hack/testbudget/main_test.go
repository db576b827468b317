package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/testbudget"
)

// The stages of hack/test.sh (hack/stages.sh, run by bash) and the budget written from them: a
// foreground stage, background stages at once (one of them failing inside a shell function, one
// burning CPU and printing what a build prints), a stage stopped when the run ends early.
func TestStagesAndBudget(t *testing.T) {
	dir := t.TempDir()
	script := `set -euo pipefail
STAGE_DIR=$1
source ../stages.sh
fails() { echo "step one"; false; echo "never printed"; }
burn() { local i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo "building nuv-full 1.0 from source once"; }
stage_run "build nuv" "" "" true
stage_start "full program" "building nuv-full" "" burn
stage_start "vet" "" "" fails
stage_start "slow" "" "from the cache" sh -c 'sleep 0.2; echo "image x: from the cache"'
if stage_wait "full program" "vet" "slow"; then echo "stage_wait passed a failed stage"; exit 3; fi
if stage_check; then echo "stage_check passed a failed stage"; exit 4; fi
stage_start "node image" "" "" sleep 60
sleep 0.5 # the stage has begun (a stop at once is recorded by stage_stop_all, without CPU time)
stage_start "kwok" "" "" sleep 60
stage_stop_all
`
	cmd := exec.Command("bash", "-c", script, "bash", dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if took := time.Since(started); took > 30*time.Second {
		t.Errorf("the script took %s: the stopped stage was waited for", took)
	}
	for _, want := range []string{"== build nuv: done in", "== full program: done in", ", built (log: " + filepath.Join(dir, "full program.log"), ", cached (log: "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, want := range []string{"== vet: FAILED (exit 1) after", "  | step one\n", "== setup failed: vet\n== setup failed: vet\n", "== node image: stopped after", "== kwok: stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String()+stdout.String(), "never printed") {
		t.Error("a stage's shell function went on after a failing command")
	}

	out := filepath.Join(dir, "artifacts", "budget.json")
	if err := run([]string{"-o", out, "-stages", filepath.Join(dir, "stages.tsv"), "-events", filepath.Join(dir, "none.json"),
		"-started", strconv.FormatInt(started.Unix(), 10), "-load", "0.50 0.25 0.10 1/100 42", "-commit", "abc1234"}); err != nil {
		t.Fatal(err)
	}
	b, err := testbudget.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range b.Stages {
		got[s.Name] = strconv.FormatBool(s.OK) + " " + s.Cache
		if s.Name == "full program" && (s.CPUSeconds <= 0 || math.Abs(s.CPUSeconds-(s.UserSeconds+s.SysSeconds)) > 0.001) {
			t.Errorf("full program: CPU %v s (user %v, sys %v): want the loop's CPU time", s.CPUSeconds, s.UserSeconds, s.SysSeconds)
		}
		if s.Name == "slow" && s.WallSeconds < 0.2 {
			t.Errorf("slow: wall %v s, want at least 0.2", s.WallSeconds)
		}
	}
	want := map[string]string{"build nuv": "true ", "full program": "true built", "vet": "false ", "slow": "true cached", "node image": "false ", "kwok": "false "}
	if len(got) != len(want) {
		t.Errorf("stages %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stage %q: %q, want %q", k, got[k], v)
		}
	}
	if b.Commit != "abc1234" || b.Machine.LoadAtStart != [3]float64{0.5, 0.25, 0.1} || b.Machine.CPUs < 1 || len(b.Packages) != 0 {
		t.Errorf("budget %+v", b)
	}
	log, err := os.ReadFile(filepath.Join(dir, "vet.log"))
	if err != nil || string(log) != "step one\n" {
		t.Errorf("vet.log: %q, %v", log, err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-started", "1"}, "usage: testbudget"},
		{[]string{"-o", "x.json"}, "usage: testbudget"},
		{[]string{"-o", "x.json", "-started", "yesterday"}, `-started "yesterday" is not seconds since the epoch`},
		{[]string{"-o", "x.json", "-started", "1", "-load", "1.0"}, "want the three load averages"},
		{[]string{"-o", "x.json", "-started", "1", "-load", "a b c"}, `"a" is not a load average`},
	} {
		if err := run(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
