package reportcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/report"
)

func TestMergeCommand(t *testing.T) {
	project := t.TempDir()
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	dir := filepath.Join(project, "_reports", "20261130-060000")
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	os.WriteFile(filepath.Join(dir, "logs", "a.log"), []byte("ok\n"), 0o644)
	if err := report.WriteDir(dir, &report.Report{Target: "dtest", Started: t0, Results: []report.Result{
		{Cluster: "a", Type: "eks", Status: report.Passed, Attempts: 1, Started: t0, Seconds: 2, Log: "logs/a.log"}}}); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(project, "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, report.JSONFile), []byte(`{"target":`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout or stderr
	}{
		{"no verb prints the help", nil, 0, "merge  merge the report directories"},
		{"an unknown verb", []string{"show"}, 2, `unknown verb "show"`},
		{"a misspelt verb", []string{"mrege"}, 2, `unknown verb "mrege"; did you mean "merge"?`},
		{"no directories", []string{"merge"}, 2, "name at least one report directory"},
		{"merge with a broken directory named", []string{"merge", "_reports", "broken", "--out", "m1"}, 0, "skipped " + broken + ": malformed report.json"},
		{"default --out under _reports", []string{"merge", "_reports/20261130-060000"}, 0, "report: " + filepath.Join(project, "_reports", "merged-20261130-070000")},
		{"nothing mergeable", []string{"merge", "broken", "--out", "m2"}, 1, "no report could be merged"},
		{"an existing --out", []string{"merge", "_reports/20261130-060000", "--out", "m1"}, 1, "exists and is not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 0), Dir: project,
				Getenv: func(k string) string {
					if k == "NUV_PROJECT" {
						return project
					}
					return ""
				}}
			err := run(env, tc.args, "0.2.0", func() time.Time { return t0.Add(time.Hour) })
			if got := cli.ExitCode(err); got != tc.code {
				t.Errorf("exit %d (%v), want %d", got, err, tc.code)
			}
			all := out.String() + errb.String()
			if err != nil {
				all += err.Error()
			}
			if !strings.Contains(all, tc.out) {
				t.Errorf("output lacks %q:\n%s", tc.out, all)
			}
		})
	}
}
