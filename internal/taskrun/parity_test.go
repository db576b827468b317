package taskrun_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/shell"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// stockTask returns the stock go-task CLI of the version go.mod pins: $NUV_STOCK_TASK, else one
// built from the module in go.mod (`go build github.com/go-task/task/v3/cmd/task`, the module
// cache shared with nuv's build) and kept per version in the user cache directory, so a test run
// builds it at most once. When it cannot be had the test fails: a parity test that compared
// nothing must not pass.
func stockTask(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NUV_STOCK_TASK"); p != "" {
		return p
	}
	stockOnce.Do(func() { stockPath, stockErr = buildStockTask() })
	if stockErr != nil {
		t.Fatalf("cannot build the stock go-task %s to compare against (set NUV_STOCK_TASK to a prebuilt one, or run with -short): %v", taskrun.TaskVersion(), stockErr)
	}
	return stockPath
}

var (
	stockOnce sync.Once
	stockPath string
	stockErr  error
)

func buildStockTask() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "nuv-test", "go-task-"+taskrun.TaskVersion())
	bin := filepath.Join(dir, "task")
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built next to the final name and renamed: a concurrent test run never sees half a binary.
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "github.com/go-task/task/v3/cmd/task")
	cmd.Dir = "../.." // the repository's module: the version go.mod pins
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// TestIntegrationStockTaskParity runs every golden case that needs no nuv-only option under the
// stock go-task CLI and under nuv (run as `task`, as a separate process in the same conditions),
// and requires the same exit codes and the same output, save nuv's "nuv: " error prefix.
func TestIntegrationStockTaskParity(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: installs and runs the stock go-task CLI")
	}
	stock := stockTask(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	links, err := shell.LinkDir(home, exe, shell.DefaultLinks)
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "NO_COLOR=1", "NUV_HOME="+home, "PATH="+shell.PrependPath(links, os.Getenv("PATH")))
	// Flag errors are reported by pflag with the CLI's full usage text, which differs by design.
	differsByDesign := map[string]bool{"--no-such-flag": true}
	// nuv names the line of a YAML fault as FILE:LINE (go-task: the line where the enclosing block
	// began, issue 22), see TestTaskfileErrors.
	casesDifferByDesign := map[string]bool{"bad-yaml": true}
	for _, tc := range semanticCases() {
		if tc.setup != nil || casesDifferByDesign[tc.name] {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			nuvDir, stockDir := fixture(t, tc.fixture), fixture(t, tc.fixture)
			for _, args := range tc.runs {
				if len(args) > 0 && differsByDesign[args[0]] {
					continue
				}
				gotOut, gotErr, gotCode := runProc(t, filepath.Join(links, "task"), args, nuvDir, env)
				wantOut, wantErr, wantCode := runProc(t, stock, args, stockDir, env)
				gotOut, wantOut = normalize(gotOut, nuvDir), normalize(wantOut, stockDir)
				gotErr = strings.ReplaceAll(normalize(gotErr, nuvDir), "nuv: task: ", "task: ")
				wantErr = normalize(wantErr, stockDir)
				if gotCode != wantCode || gotOut != wantOut || gotErr != wantErr {
					t.Errorf("task %s differs from stock go-task\nnuv:   exit %d\n%s%s\nstock: exit %d\n%s%s",
						strings.Join(args, " "), gotCode, gotOut, gotErr, wantCode, wantOut, wantErr)
				}
			}
		})
	}
}

var durations = regexp.MustCompile(`\d+(\.\d+)?(ms|µs|s)\b`)

func normalize(s, dir string) string {
	return durations.ReplaceAllString(strings.ReplaceAll(s, dir, "$DIR"), "<dur>")
}

func runProc(t *testing.T, prog string, args []string, dir string, env []string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", prog, err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}
