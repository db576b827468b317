package history

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func at(min int) time.Time { return time.Date(2026, 12, 1, 10, min, 0, 0, time.UTC) }

func samples(kind, action string, secs ...float64) []Sample {
	var out []Sample
	for i, s := range secs {
		out = append(out, Sample{Kind: kind, Action: action, Seconds: s, At: at(i)})
	}
	return out
}

func TestFor(t *testing.T) {
	hist := append(samples("vpc", "create", 4, 1, 3, 2), samples("cluster", "create", 600)...)
	hist = append(hist, samples("vpc", "delete", 30)...)
	for _, tc := range []struct {
		kind, action string
		want         string
	}{
		{"vpc", "create", "~2.5s (p90 4s, 4 samples)"},
		{"cluster", "create", "~10m0s (p90 10m0s, 1 sample)"},
		{"vpc", "delete", "~30s (p90 30s, 1 sample)"},
		{"vpc", "update", "no history"},
		{"node-group", "create", "no history"},
	} {
		if got := For(hist, tc.kind, tc.action).String(); got != tc.want {
			t.Errorf("For(%s, %s) = %q, want %q", tc.kind, tc.action, got, tc.want)
		}
	}
	// Nearest-rank 90th percentile of 1..10 is 9, of 1..20 is 18.
	var ten []float64
	for i := 1; i <= 20; i++ {
		ten = append(ten, float64(i))
	}
	if e := For(samples("k", "create", ten[:10]...), "k", "create"); e.P90 != 9*time.Second || e.Median != 5500*time.Millisecond {
		t.Errorf("1..10: %+v", e)
	}
	if e := For(samples("k", "create", ten...), "k", "create"); e.P90 != 18*time.Second {
		t.Errorf("1..20: %+v", e)
	}
}

func TestTotal(t *testing.T) {
	for _, tc := range []struct {
		est  []Estimate
		want string
	}{
		{nil, "no history"},
		{[]Estimate{{}}, "no history"},
		{[]Estimate{{Samples: 3, Median: 2 * time.Second, P90: 3 * time.Second}, {Samples: 1, Median: 90 * time.Second, P90: 2 * time.Minute}}, "~1m32s (p90 2m3s)"},
		{[]Estimate{{Samples: 3, Median: 2 * time.Second, P90: 3 * time.Second}, {}, {}}, "~2s (p90 3s), plus 2 step(s) with no history"},
		{[]Estimate{{Samples: 3, Median: 3 * time.Hour, P90: 4 * time.Hour}}, "~3h0m (p90 4h0m)"},
	} {
		var tot Total
		for _, e := range tc.est {
			tot.Add(e)
		}
		if got := tot.String(); got != tc.want {
			t.Errorf("total of %+v = %q, want %q", tc.est, got, tc.want)
		}
	}
}

// TestMergeKeepsNewest: each kind and action keeps its newest Keep samples; others are untouched.
func TestMergeKeepsNewest(t *testing.T) {
	var add []Sample
	for i := 0; i < Keep+10; i++ {
		add = append(add, Sample{Kind: "vpc", Action: "create", Seconds: float64(i), At: at(0).Add(time.Duration(i) * time.Second)})
	}
	got := merge(samples("cluster", "create", 600), add...)
	n := 0
	for _, s := range got {
		if s.Kind == "vpc" {
			n++
			if s.Seconds < 10 {
				t.Fatalf("kept an old sample %+v", s)
			}
		}
	}
	if n != Keep || len(got) != Keep+1 {
		t.Fatalf("kept %d vpc samples of %d in all, want %d and %d", n, len(got), Keep, Keep+1)
	}
}

// TestDirConcurrentAdds: nuvs adding at once all land, the file is 0600 and reads back.
func TestDirConcurrentAdds(t *testing.T) {
	d := Dir{Path: t.TempDir() + "/history"}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Add(ctx, "eks", Sample{Kind: "vpc", Action: "create", Seconds: float64(i), At: at(i), Cluster: fmt.Sprint("c", i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := d.Load(ctx, "eks")
	if err != nil || len(got) != 8 {
		t.Fatalf("loaded %d samples (%v), want 8", len(got), err)
	}
	if none, err := d.Load(ctx, "aks"); err != nil || len(none) != 0 {
		t.Fatalf("another provider: %v %v", none, err)
	}
	assertMode(t, d.file("eks"))
}
