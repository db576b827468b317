package engine

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// recordingStep is an add-ons handler that counts the engine's calls: it plans an install until
// one was executed, then says its one add-on is as wanted.
type recordingStep struct {
	mu              sync.Mutex
	plans, executes int
	installed       bool
}

func (r *recordingStep) Plan(_ context.Context, _ cluster.Provider, _ *spec.Cluster, _ *cluster.Plan) (*cluster.Change, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans++
	if r.installed {
		return nil, 1, nil
	}
	return &cluster.Change{Action: cluster.Create, Fields: []cluster.FieldChange{{Field: "index", New: "addons/index.yaml"}}}, 0, nil
}

func (r *recordingStep) Execute(_ context.Context, _ cluster.Provider, _ *spec.Cluster, ch cluster.Change, out io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.executes++
	r.installed = true
	fmt.Fprintf(out, "installing the add-ons of %s\n", ch.Key)
	return nil
}

func (r *recordingStep) calls() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.plans, r.executes
}

// TestStepsNotEnteredWithoutAddons: planning, applying (a new cluster, a change, no change) and
// deleting a cluster whose spec lists no add-ons never calls the add-ons handler.
func TestStepsNotEnteredWithoutAddons(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t, newMem())
	r := &recordingStep{}
	e.Addons = r
	for _, c := range []*spec.Cluster{specOf("dev", 1), specOf("dev", 2), specOf("dev", 2)} {
		if _, err := e.Plan(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Delete(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if plans, executes := r.calls(); plans != 0 || executes != 0 {
		t.Fatalf("a spec without add-ons reached the add-ons handler: %d plan(s), %d execute(s)", plans, executes)
	}
}

// TestStepsEnteredOncePerApply: an apply of a spec with add-ons asks the handler for its change
// once, after the provider's, and carries it out once as the plan's last step; an apply with
// nothing to change asks once and carries out nothing; a delete does not reach it.
func TestStepsEnteredOncePerApply(t *testing.T) {
	ctx := context.Background()
	withAddons := func(c *spec.Cluster) *spec.Cluster {
		c.Spec.Addons = &spec.AddonsSpec{}
		return c
	}
	e, out := newEngine(t, newMem())
	r := &recordingStep{}
	e.Addons = r
	tests := []struct {
		name                 string
		spec                 *spec.Cluster
		wantKeys             []string
		wantPlans, wantExecs int
		wantUnchanged        int
	}{
		{"new cluster", withAddons(specOf("dev", 1)), []string{"net/dev", "group/g0", "addons/dev"}, 1, 1, 0},
		{"scaled", withAddons(specOf("dev", 2)), []string{"group/g0"}, 1, 0, 2},
		{"converged", withAddons(specOf("dev", 2)), nil, 1, 0, 3},
	}
	for _, tt := range tests {
		p0, x0 := r.calls()
		plan, err := e.Apply(ctx, tt.spec, ApplyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var keys []string
		for _, ch := range plan.Changes {
			keys = append(keys, ch.Key)
		}
		if strings.Join(keys, " ") != strings.Join(tt.wantKeys, " ") || plan.Unchanged != tt.wantUnchanged {
			t.Errorf("%s: plan %v, %d unchanged; want %v, %d", tt.name, keys, plan.Unchanged, tt.wantKeys, tt.wantUnchanged)
		}
		if p, x := r.calls(); p-p0 != tt.wantPlans || x-x0 != tt.wantExecs {
			t.Errorf("%s: the handler planned %d and executed %d time(s); want %d and %d", tt.name, p-p0, x-x0, tt.wantPlans, tt.wantExecs)
		}
	}
	if !strings.Contains(out.String(), "[3/3] creating addons/dev ...\ninstalling the add-ons of addons/dev\n[3/3] created addons/dev in ") {
		t.Errorf("apply output:\n%s", out)
	}
	p0, x0 := r.calls()
	if _, err := e.Delete(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if p, x := r.calls(); p != p0 || x != x0 {
		t.Errorf("delete reached the add-ons handler: %d plan(s), %d execute(s)", p-p0, x-x0)
	}
}

// TestStepsWithoutHandler: a spec with add-ons cannot be planned by an engine with no add-ons
// handler; nothing is written.
func TestStepsWithoutHandler(t *testing.T) {
	m := newMem()
	e, _ := newEngine(t, m)
	c := specOf("dev", 1)
	c.Spec.Addons = &spec.AddonsSpec{}
	_, err := e.Apply(context.Background(), c, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.addons: this nuv has no addons handler") || m.writes != 0 {
		t.Fatalf("apply without an add-ons handler: %v (provider writes %d)", err, m.writes)
	}
}

// TestEngineImportsNoAddons: the add-ons handler is registered by the program that builds the
// engine; the engine itself does not import internal/addons.
func TestEngineImportsNoAddons(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the engine's files: %v %v", files, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			if p, _ := strconv.Unquote(is.Path.Value); p == "github.com/nuv-dev/nuv/internal/addons" {
				t.Errorf("%s imports %s: register its handler (Engine.Addons) instead", f, p)
			}
		}
	}
}
