package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/history"
)

// TestApplyRecordsHistory: every carried-out step lands in the history under its provider, kind
// and action, a failed step does not, and the plan of the next cluster of the same provider gets
// estimates from it (and "no history" for a kind never applied).
func TestApplyRecordsHistory(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	e, _ := newEngine(t, m)
	h := history.Dir{Path: filepath.Join(t.TempDir(), "history")}
	e.History = h

	p, err := e.Plan(ctx, specOf("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	est, total, err := e.Estimates(ctx, p)
	if err != nil || len(est) != 2 || est[0].Known() || total.String() != "no history" {
		t.Fatalf("estimates before any apply: %v %+v %v", err, est, total)
	}
	if _, err := e.Apply(ctx, specOf("a", 1), ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	m.failOn = "group/g1"
	if _, err := e.Apply(ctx, specOf("a", 1, 1), ApplyOptions{}); err == nil {
		t.Fatal("the injected failure did not fail the apply")
	}
	got, err := h.Load(ctx, "mem")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range got {
		keys = append(keys, s.Kind+" "+s.Action+" "+s.Cluster)
		if s.Seconds < 0 || s.At.IsZero() {
			t.Errorf("sample %+v", s)
		}
	}
	if strings.Join(keys, ",") != "net create a,group create a" {
		t.Fatalf("history holds %q, want the two steps of the first apply only", keys)
	}

	// Another machine's provider (an empty cloud), the same history.
	e2, _ := newEngine(t, newMem())
	e2.History = h
	p, err = e2.Plan(ctx, specOf("b", 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	est, total, err = e2.Estimates(ctx, p)
	if err != nil || !est[0].Known() || est[0].Samples != 1 || est[2].Samples != 1 || total.Known != 3 || total.Unknown != 0 {
		t.Fatalf("estimates after an apply: %v %+v %+v", err, est, total)
	}
	var b bytes.Buffer
	WriteEstimates(&b, p, est, total)
	for _, want := range []string{"Expected apply time of cluster b, from the recorded applies of provider mem:\n",
		"  create net/b     ~", "  create group/g1  ~", ", 1 sample)\n", "  total            ~"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("estimates:\n%s\nwant %q", b.String(), want)
		}
	}
}
