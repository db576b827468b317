package benchutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStats(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name           string
		in             []time.Duration
		median, lo, hi time.Duration
	}{
		{"none", nil, 0, 0, 0},
		{"one", []time.Duration{5 * ms}, 5 * ms, 5 * ms, 5 * ms},
		{"odd count", []time.Duration{9 * ms, 1 * ms, 4 * ms}, 4 * ms, 1 * ms, 9 * ms},
		{"even count: mean of the middle two", []time.Duration{8 * ms, 2 * ms, 4 * ms, 6 * ms}, 5 * ms, 2 * ms, 8 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, lo, hi := Stats(tc.in)
			if m != tc.median || lo != tc.lo || hi != tc.hi {
				t.Errorf("Stats = %v %v %v, want %v %v %v", m, lo, hi, tc.median, tc.lo, tc.hi)
			}
			if got := Median(tc.in); got != tc.median {
				t.Errorf("Median = %v, want %v", got, tc.median)
			}
		})
	}
	if got := MS(1500 * time.Microsecond); got != 1.5 {
		t.Errorf("MS = %v", got)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "nuv", "main.go")); err != nil {
		t.Errorf("module root %s holds no nuv/main.go: %v", root, err)
	}
}
