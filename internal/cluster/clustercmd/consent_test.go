package clustercmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// openPTY returns a pseudo-terminal: the test types on master, the command reads slave (a real
// terminal to term.IsTerminal, as a user's shell gives nuv).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// brokenLocal makes a local cluster whose state cannot be read: real to the local provider (list,
// plan and delete see it), cheap to make and to delete. With state "" its create never finished.
func brokenLocal(t *testing.T, home, name, stateJSON string) string {
	t.Helper()
	dir := filepath.Join(home, "clusters", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if stateJSON != "" {
		if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(stateJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
	}
}

// TestConsent: deletes and replaces ask on a terminal (only "yes" goes ahead), --yes and
// --auto-approve skip the question, and without a terminal they refuse, changing nothing. A
// local cluster named one by one is deleted without a question, as kind does.
func TestConsent(t *testing.T) {
	const lcSpec = "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: half}\nspec: {provider: local}\n"
	tests := []struct {
		name   string
		args   []string
		answer string // typed on a terminal; "-" means stdin is not a terminal
		code   int
		errHas string
		golden string   // the output (prompt included), NUV_HOME shown as $NUV_HOME
		gone   []string // clusters deleted afterwards; the others remain
	}{
		{"delete --all without a terminal", []string{"delete", "--all"}, "-", 1,
			"refusing to delete 2 clusters (a, b) without confirmation: standard input is not a terminal, so nobody can be asked; pass --yes (or --auto-approve) to confirm; nothing was changed", "", nil},
		{"delete --all answered no", []string{"delete", "--all"}, "no", 1,
			`delete 2 clusters (a, b) cancelled (answer "no", not "yes"); nothing was changed`, "consent-delete-all-no.golden", nil},
		{"delete --all answered y", []string{"delete", "--all"}, "y", 1, `(answer "y", not "yes")`, "", nil},
		{"delete --all answered yes", []string{"delete", "--all"}, "yes", 0, "", "consent-delete-all-yes.golden", []string{"a", "b"}},
		{"delete --all --yes", []string{"delete", "--all", "--yes"}, "-", 0, "", "", []string{"a", "b"}},
		{"delete --all -y", []string{"delete", "--all", "-y"}, "-", 0, "", "", []string{"a", "b"}},
		{"delete --all --auto-approve", []string{"delete", "--auto-approve", "--all"}, "-", 0, "", "", []string{"a", "b"}},
		{"delete --all -auto-approve", []string{"delete", "-auto-approve", "--all"}, "-", 0, "", "", []string{"a", "b"}},
		{"delete --all --dry-run asks nothing", []string{"delete", "--all", "--dry-run"}, "-", 0, "", "", nil},
		{"delete of a local cluster by name", []string{"delete", "a"}, "-", 0, "", "", []string{"a"}},
		{"delete of a cloud cluster without a terminal", []string{"delete", "g"}, "-", 1,
			"refusing to delete cluster g without confirmation: standard input is not a terminal", "", nil},
		{"delete of a cloud cluster among local ones", []string{"delete", "a", "g"}, "-", 1, "refusing to delete cluster g without", "", nil},
		{"apply that replaces, without a terminal", []string{"apply", "-f", "SPEC"}, "-", 1,
			"refusing to apply (replace control-plane/half of cluster half) without confirmation: standard input is not a terminal", "", nil},
		{"apply that replaces, answered no", []string{"apply", "-f", "SPEC"}, "no", 1, "cancelled", "consent-apply-replace-no.golden", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, out, _ := testEnv(t, nil)
			home := env.Getenv("NUV_HOME")
			// `delete --all` sees a and b only; the others also have half (a create that never
			// finished: apply replaces it) and g, a GKE cluster's record.
			all := strings.Contains(strings.Join(tt.args, " "), "--all")
			dirs := map[string]string{
				"a": brokenLocal(t, home, "a", "{not json"),
				"b": brokenLocal(t, home, "b", "{not json"),
			}
			store := state.Dir{Path: filepath.Join(home, "state")}
			if !all {
				dirs["half"] = brokenLocal(t, home, "half", "")
				g := &state.Record{Name: "g", Provider: "gke", Phase: state.Running,
					Spec: &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{Provider: "gke"}}}
				if err := store.Save(context.Background(), g); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "SPEC" {
					args[i] = writeSpec(t, env.Dir, lcSpec)
				}
			}
			if tt.answer != "-" {
				m, s := openPTY(t)
				env.In = s
				if _, err := m.WriteString(tt.answer + "\n"); err != nil {
					t.Fatal(err)
				}
			}
			err := Run(context.Background(), env, args)
			if got := cli.ExitCode(err); got != tt.code {
				t.Fatalf("exit %d, want %d (%v)\n%s", got, tt.code, err, out)
			}
			if tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)) {
				t.Fatalf("error %v\nwant it to contain %q", err, tt.errHas)
			}
			if tt.golden != "" {
				checkGolden(t, tt.golden, strings.ReplaceAll(out.String(), home, "$NUV_HOME"))
			}
			gone := map[string]bool{}
			for _, n := range tt.gone {
				gone[n] = true
			}
			for n, dir := range dirs {
				if exists(dir) == gone[n] {
					t.Errorf("cluster %s: exists=%v, want %v", n, exists(dir), !gone[n])
				}
			}
			if all {
				return
			}
			if _, err := store.Load(context.Background(), "g"); err != nil {
				t.Errorf("the gke cluster's record: %v", err)
			}
			if _, err := store.Load(context.Background(), "half"); err == nil {
				t.Errorf("a refused apply wrote a record of half")
			}
			if entries, _ := os.ReadDir(dirs["half"]); len(entries) != 0 {
				t.Errorf("a refused apply touched half's directory: %v", entries)
			}
		})
	}
}
