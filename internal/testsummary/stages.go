package testsummary

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TestsStage is the name hack/test.sh gives its `go test` stage.
const TestsStage = "tests"

// Stage is one stage of a run of the test command: a setup step (installing, building, starting
// a runtime) or the tests themselves.
type Stage struct {
	Name        string  `json:"name"`
	WallSeconds float64 `json:"wall_seconds"`
	// CPUSeconds is UserSeconds+SysSeconds: the CPU time of the stage's process tree (of the
	// processes it waited for; a daemon it started is not in it).
	CPUSeconds  float64 `json:"cpu_seconds"`
	UserSeconds float64 `json:"user_seconds"`
	SysSeconds  float64 `json:"sys_seconds"`
	// OK is false for a stage that failed.
	OK bool `json:"ok"`
	// Cache is "built" or "cached" where the stage's output says which, else "".
	Cache string `json:"cache,omitempty"`
}

// ReadStages reads the stage file hack/test.sh writes: one line per stage as it ends,
// tab-separated
//
//	NAME WALL USER SYS EXIT CACHE
//
// (seconds as decimals, EXIT the stage's exit status, CACHE "built", "cached" or empty). name is
// the file's name for errors.
func ReadStages(r io.Reader, name string) ([]Stage, error) {
	var stages []Stage
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 tab-separated fields (name, wall, user, sys, exit, cache), got %d: %q", name, n, len(f), line)
		}
		var secs [3]float64
		for i, v := range f[1:4] {
			s, err := strconv.ParseFloat(v, 64)
			if err != nil || s < 0 {
				return nil, fmt.Errorf("%s:%d: %s seconds %q is not a non-negative number", name, n, [3]string{"wall", "user", "sys"}[i], v)
			}
			secs[i] = s
		}
		code, err := strconv.Atoi(f[4])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: exit status %q is not a number", name, n, f[4])
		}
		if f[5] != "" && f[5] != "built" && f[5] != "cached" {
			return nil, fmt.Errorf("%s:%d: cache %q is neither built, cached nor empty", name, n, f[5])
		}
		stages = append(stages, Stage{Name: f[0], WallSeconds: secs[0], UserSeconds: secs[1], SysSeconds: secs[2],
			CPUSeconds: float64(int64((secs[1]+secs[2])*1000+0.5)) / 1000, OK: code == 0, Cache: f[5]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return stages, nil
}

// writeStages prints the stages in the order they ended: wall time, CPU time and how each went.
func writeStages(w io.Writer, stages []Stage) {
	if len(stages) == 0 {
		return
	}
	var wall, cpu float64
	for _, s := range stages {
		wall += s.WallSeconds
		cpu += s.CPUSeconds
	}
	fmt.Fprintf(w, "\nstages (%d, in the order they ended; CPU = user+sys of the stage's processes; stages may overlap):\n", len(stages))
	for _, s := range stages {
		how := ""
		switch {
		case !s.OK:
			how = "  FAILED"
		case s.Cache != "":
			how = "  (" + s.Cache + ")"
		}
		fmt.Fprintf(w, "  %7.1fs  %7.1fs CPU  %s%s\n", s.WallSeconds, s.CPUSeconds, s.Name, how)
	}
	fmt.Fprintf(w, "  %7.1fs  %7.1fs CPU  (sum)\n", wall, cpu)
}
