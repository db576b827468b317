package taskrun_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/shell"
)

// stockTask returns the stock go-task v3.54.0 CLI: $NUV_STOCK_TASK, else one installed from the Go
// module proxy into a temporary GOBIN. When neither can be had the test fails: a parity test that
// compared nothing must not pass.
func stockTask(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NUV_STOCK_TASK"); p != "" {
		return p
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "install", "github.com/go-task/task/v3/cmd/task@v3.54.0")
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot install the stock go-task v3.54.0 to compare against (set NUV_STOCK_TASK to a prebuilt one, or run with -short): %v\n%s", err, out)
	}
	return filepath.Join(bin, "task")
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
	for _, tc := range semanticCases() {
		if tc.setup != nil {
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
