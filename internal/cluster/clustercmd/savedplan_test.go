package clustercmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

func TestTerraformSpelling(t *testing.T) {
	tests := []struct{ in, want string }{
		{"-out p.plan -f x", "--out p.plan -f x"},
		{"-out=p.plan", "--out=p.plan"},
		{"--out p", "--out p"},
		{"-o json -outx", "-o json -outx"},
		{"-detailed-exitcode -auto-approve", "--detailed-exitcode --auto-approve"},
		{"-- -out", "-- -out"},
	}
	for _, tt := range tests {
		got := strings.Join(terraformSpelling(strings.Fields(tt.in), "out", "detailed-exitcode", "auto-approve"), " ")
		if got != tt.want {
			t.Errorf("%q -> %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSavedPlan: `plan -out FILE` writes the plan (0600) as terraform users expect, and
// `apply FILE` refuses it, changing nothing, when the world or the state record moved since, when
// the file was changed, or when it is not a plan. The applies that go ahead need a real cluster:
// TestIntegrationLifecycle.
func TestSavedPlan(t *testing.T) {
	const body = "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: sp}\nspec:\n  provider: local\n  nodeGroups: [{name: web, count: 2}]\n"
	tests := []struct {
		name string
		// move changes something between the plan and the apply; it returns apply's arguments
		// after "apply".
		move   func(t *testing.T, env *cli.Env, plan string) []string
		code   int
		errHas string
	}{
		{"the world moved: a cluster of that name appeared", func(t *testing.T, env *cli.Env, plan string) []string {
			brokenLocal(t, env.Getenv("NUV_HOME"), "sp", "")
			return []string{plan}
		}, 1, "saved plan is stale: what exists changed since the plan was made; nothing was changed: make a new plan"},
		{"the state record moved", func(t *testing.T, env *cli.Env, plan string) []string {
			rec := &state.Record{Name: "sp", Provider: "local", Phase: state.Running,
				Spec: &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "sp"}, Spec: spec.Spec{Provider: "local"}}}
			if err := (state.Dir{Path: filepath.Join(env.Getenv("NUV_HOME"), "state")}).Save(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			return []string{plan}
		}, 1, "saved plan is stale: its state record changed since the plan was made"},
		{"the file was edited", func(t *testing.T, env *cli.Env, plan string) []string {
			b, _ := os.ReadFile(plan)
			if err := os.WriteFile(plan, []byte(strings.Replace(string(b), `"count": 2`, `"count": 9`, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{plan}
		}, 1, "the saved plan was changed after nuv wrote it (digest mismatch); make a new plan"},
		{"not a plan", func(t *testing.T, env *cli.Env, plan string) []string {
			return []string{writeSpec(t, env.Dir, body)}
		}, 1, "not a saved plan of nuv (`nuv cluster plan -out FILE` writes one)"},
		{"no such file", func(t *testing.T, env *cli.Env, plan string) []string {
			return []string{plan + ".missing"}
		}, 1, "saved plan: open "},
		{"another state store", func(t *testing.T, env *cli.Env, plan string) []string {
			return []string{plan, "--state", "dir:" + filepath.Join(env.Dir, "other")}
		}, 1, "was planned against the state in "},
		{"a plan and a spec", func(t *testing.T, env *cli.Env, plan string) []string {
			return []string{plan, "-f", writeSpec(t, env.Dir, body)}
		}, 2, "give a spec file with -f FILE or one saved plan"},
		{"two plans", func(t *testing.T, env *cli.Env, plan string) []string {
			return []string{plan, plan}
		}, 2, "give a spec file with -f FILE or one saved plan"},
		{"--only", func(t *testing.T, env *cli.Env, plan string) []string {
			return []string{plan, "--only", "sp"}
		}, 2, "a saved plan is applied as it is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, out, _ := testEnv(t, nil)
			f := writeSpec(t, env.Dir, body)
			plan := filepath.Join(env.Dir, "sp.plan")
			if err := Run(context.Background(), env, []string{"plan", "-f", f, "-out", plan, "--detailed-exitcode"}); cli.ExitCode(err) != 2 {
				t.Fatalf("plan -out --detailed-exitcode: exit %d (%v), want 2", cli.ExitCode(err), err)
			}
			if want := "Saved the plan to " + plan + "."; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "+ create node-group/web") {
				t.Fatalf("plan -out output lacks the plan or %q:\n%s", want, out)
			}
			st, err := os.Stat(plan)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("saved plan: %v (mode %v), want 0600", err, st.Mode().Perm())
			}
			if tmp, _ := filepath.Glob(filepath.Join(env.Dir, ".sp.plan.tmp-*")); len(tmp) > 0 {
				t.Fatalf("temporary files left: %v", tmp)
			}
			args := tt.move(t, env, plan)
			home := env.Getenv("NUV_HOME")
			before := snapshot(t, home)
			err = Run(context.Background(), env, append([]string{"apply"}, args...))
			if cli.ExitCode(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("apply %v: exit %d, %v\nwant exit %d and %q", args, cli.ExitCode(err), err, tt.code, tt.errHas)
			}
			if after := snapshot(t, home); after != before {
				t.Fatalf("a refused apply changed NUV_HOME:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	t.Run("--out and -o json", func(t *testing.T) {
		env, out, errb := testEnv(t, nil)
		plan := filepath.Join(env.Dir, "p.json")
		if err := Run(context.Background(), env, []string{"plan", "-f", writeSpec(t, env.Dir, body), "--out=" + plan, "-o", "json"}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "[") || !strings.Contains(errb.String(), "Saved the plan to "+plan) {
			t.Fatalf("stdout:\n%s\nstderr:\n%s", out, errb)
		}
		if err := Run(context.Background(), env, []string{"plan", "-f", "x.yaml", "-out", plan, "--terraform", env.Dir}); cli.ExitCode(err) != 2 {
			t.Fatalf("-out with --terraform: %v", err)
		}
	})
}

// snapshot lists the files under dir with their sizes and modes (lock files aside: taking a lock
// to check a plan is not a change).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || strings.Contains(filepath.Base(p), "lock") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + ":" + fi.Mode().String() + ":" + itoa(int(fi.Size())) + " ")
		return nil
	})
	return b.String()
}

// TestCreateDryRunOfAnExistingCluster: `create --dry-run` refuses a cluster that exists, with the
// message and exit code of the real create.
func TestCreateDryRunOfAnExistingCluster(t *testing.T) {
	env, _, _ := testEnv(t, nil)
	brokenLocal(t, env.Getenv("NUV_HOME"), "local", "")
	dry := Run(context.Background(), env, []string{"create", "local", "--dry-run"})
	real := Run(context.Background(), env, []string{"create", "local"})
	if dry == nil || real == nil || dry.Error() != real.Error() || cli.ExitCode(dry) != cli.ExitCode(real) || cli.ExitCode(dry) == 0 {
		t.Fatalf("create --dry-run: exit %d %v\ncreate: exit %d %v", cli.ExitCode(dry), dry, cli.ExitCode(real), real)
	}
	if !strings.Contains(dry.Error(), `create "local": cluster already exists`) {
		t.Fatalf("message: %v", dry)
	}
	// A new cluster's dry run is its plan.
	env, out, _ := testEnv(t, nil)
	if err := Run(context.Background(), env, []string{"create", "local", "fresh", "--dry-run"}); err != nil || !strings.Contains(out.String(), "+ create control-plane/fresh") {
		t.Fatalf("create --dry-run of a new cluster: %v\n%s", err, out)
	}
}
