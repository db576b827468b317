// Package benchutil holds what nuv's benchmark programs (bench/*) share: their exit, a workspace
// with nuv built from the checkout, running nuv as a timed whole process, an emulator served on
// loopback, repeated timings and their summary (median, min, max) as printed rows.
package benchutil

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ModuleRoot returns the directory of the go.mod of the module the current directory is in.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == "/dev/null" {
		return "", fmt.Errorf("not inside a Go module (run from the nuv checkout)")
	}
	return filepath.Dir(gomod), nil
}

// BuildNuv builds the nuv command of the module the current directory is in into bin.
func BuildNuv(bin string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "nuv")).CombinedOutput(); err != nil {
		return fmt.Errorf("build nuv: %v\n%s", err, out)
	}
	return nil
}

// Median returns the median of ds (the mean of the middle two for an even count; 0 for none).
func Median(ds []time.Duration) time.Duration {
	m, _, _ := Stats(ds)
	return m
}

// Stats returns the median, minimum and maximum of ds (zeros for none).
func Stats(ds []time.Duration) (median, lo, hi time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return median, s[0], s[len(s)-1]
}

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
