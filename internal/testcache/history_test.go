package testcache

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHistoryOrder(t *testing.T) {
	pkgs := func(names ...string) []Package {
		var ps []Package
		for _, n := range names {
			ps = append(ps, Package{ImportPath: n})
		}
		return ps
	}
	names := func(ps []Package) []string {
		var ns []string
		for _, p := range ps {
			ns = append(ns, p.ImportPath)
		}
		return ns
	}
	for _, tt := range []struct {
		name    string
		seconds map[string]float64
		given   []string
		want    []string
	}{
		{"no history keeps the order given", nil, []string{"c", "a", "b"}, []string{"c", "a", "b"}},
		{"longest first", map[string]float64{"a": 1, "b": 600, "c": 30}, []string{"a", "b", "c"}, []string{"b", "c", "a"}},
		{"unknown packages first, in the order given", map[string]float64{"a": 1, "b": 600},
			[]string{"a", "new2", "b", "new1"}, []string{"new2", "new1", "b", "a"}},
		{"equal times keep the order given", map[string]float64{"a": 5, "b": 5, "c": 5}, []string{"c", "a", "b"}, []string{"c", "a", "b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := History{Seconds: tt.seconds}
			given := pkgs(tt.given...)
			if got := names(h.Order(given)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Order = %v, want %v", got, tt.want)
			}
			if got := names(given); !reflect.DeepEqual(got, tt.given) {
				t.Errorf("Order changed its argument: %v", got)
			}
		})
	}
}

func TestHistoryFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "history", "full.json")
	h, err := LoadHistory(file)
	if err != nil || len(h.Seconds) != 0 {
		t.Fatalf("LoadHistory of a missing file = %v, %v; want an empty history", h, err)
	}
	h.Record("example.com/slow", 10*time.Minute)
	h.Record("example.com/fast", 1500*time.Millisecond)
	if err := h.Save(file); err != nil {
		t.Fatal(err)
	}
	again, err := LoadHistory(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"example.com/slow": 600, "example.com/fast": 1.5}; !reflect.DeepEqual(again.Seconds, want) {
		t.Errorf("saved and loaded %v, want %v", again.Seconds, want)
	}
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHistory(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("LoadHistory of a broken file: %v, want an error naming %s", err, file)
	}
}
