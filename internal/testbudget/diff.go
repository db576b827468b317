package testbudget

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/testsummary"
)

// Change is one figure of two budgets: A's, B's, and whether each had it.
type Change struct {
	Name       string
	A, B       float64
	InA, InB   bool
	CPUA, CPUB float64 // stages: CPU seconds
	// Tests are a package's counts in A and B.
	TestsA, TestsB Counts
}

// Delta is B-A.
func (c Change) Delta() float64 { return c.B - c.A }

// CPUDelta is B-A of the CPU seconds.
func (c Change) CPUDelta() float64 { return c.CPUB - c.CPUA }

// Diff is the differences between two budgets.
type Diff struct {
	A, B Budget
	// Stages are by the largest change of wall time first (then of CPU time, then name).
	Stages []Change
	// Packages are by the largest change of wall time first (then name).
	Packages []Change
}

// Compare returns the differences from a to b.
func Compare(a, b Budget) Diff {
	d := Diff{A: a, B: b}
	stages := map[string]*Change{}
	var order []string
	stage := func(name string) *Change {
		c, ok := stages[name]
		if !ok {
			c = &Change{Name: name}
			stages[name] = c
			order = append(order, name)
		}
		return c
	}
	// a stage run more than once (none today) adds up
	for _, s := range a.Stages {
		c := stage(s.Name)
		c.InA, c.A, c.CPUA = true, c.A+s.WallSeconds, c.CPUA+s.CPUSeconds
	}
	for _, s := range b.Stages {
		c := stage(s.Name)
		c.InB, c.B, c.CPUB = true, c.B+s.WallSeconds, c.CPUB+s.CPUSeconds
	}
	for _, n := range order {
		d.Stages = append(d.Stages, *stages[n])
	}
	sort.SliceStable(d.Stages, func(i, j int) bool {
		x, y := d.Stages[i], d.Stages[j]
		if ax, ay := math.Abs(x.Delta()), math.Abs(y.Delta()); ax != ay {
			return ax > ay
		}
		if ax, ay := math.Abs(x.CPUDelta()), math.Abs(y.CPUDelta()); ax != ay {
			return ax > ay
		}
		return x.Name < y.Name
	})

	pkgs := map[string]*Change{}
	for _, p := range a.Packages {
		pkgs[p.Name] = &Change{Name: p.Name, InA: true, A: p.WallSeconds, TestsA: p.Counts}
	}
	for _, p := range b.Packages {
		c, ok := pkgs[p.Name]
		if !ok {
			c = &Change{Name: p.Name}
			pkgs[p.Name] = c
		}
		c.InB, c.B, c.TestsB = true, p.WallSeconds, p.Counts
	}
	for _, c := range pkgs {
		d.Packages = append(d.Packages, *c)
	}
	sort.Slice(d.Packages, func(i, j int) bool {
		x, y := d.Packages[i], d.Packages[j]
		if ax, ay := math.Abs(x.Delta()), math.Abs(y.Delta()); ax != ay {
			return ax > ay
		}
		return x.Name < y.Name
	})
	return d
}

// Write prints the differences as tables: the two runs, the totals, the stages and the packages
// (each by the largest change first). Packages whose wall time changed by less than minPackage
// seconds and whose tests did not change are counted, not listed.
func (d Diff) Write(w io.Writer, nameA, nameB string, minPackage float64) error {
	fmt.Fprintf(w, "A: %s (%s)\nB: %s (%s)\n", nameA, describe(d.A), nameB, describe(d.B))

	t := &table{title: "totals"}
	t.row("", "A", "B", "change", "")
	t.row("wall", secs(d.A.WallSeconds, true), secs(d.B.WallSeconds, true), delta(d.B.WallSeconds-d.A.WallSeconds), percent(d.A.WallSeconds, d.B.WallSeconds))
	t.row("setup CPU", secs(d.A.SetupCPU(), true), secs(d.B.SetupCPU(), true), delta(d.B.SetupCPU()-d.A.SetupCPU()), percent(d.A.SetupCPU(), d.B.SetupCPU()))
	t.row("tests CPU", secs(d.A.testsCPU(), d.A.hasTests()), secs(d.B.testsCPU(), d.B.hasTests()), delta(d.B.testsCPU()-d.A.testsCPU()), percent(d.A.testsCPU(), d.B.testsCPU()))
	for _, c := range []struct {
		name string
		a, b int
	}{{"passed", d.A.Tests.Passed, d.B.Tests.Passed}, {"failed", d.A.Tests.Failed, d.B.Tests.Failed}, {"skipped", d.A.Tests.Skipped, d.B.Tests.Skipped}} {
		t.row(c.name, fmt.Sprint(c.a), fmt.Sprint(c.b), intDelta(c.b-c.a), "")
	}
	t.row("packages", fmt.Sprint(len(d.A.Packages)), fmt.Sprint(len(d.B.Packages)), intDelta(len(d.B.Packages)-len(d.A.Packages)), "")
	t.write(w)

	t = &table{title: "stages (largest change first)"}
	t.row("", "A wall", "B wall", "change", "A CPU", "B CPU", "change")
	for _, c := range d.Stages {
		t.row(c.Name, secs(c.A, c.InA), secs(c.B, c.InB), delta(c.Delta()), secs(c.CPUA, c.InA), secs(c.CPUB, c.InB), delta(c.CPUDelta()))
	}
	t.write(w)

	t = &table{title: "packages (test binaries' wall time; largest change first)"}
	t.row("", "A", "B", "change", "tests passed/failed/skipped")
	var same int
	for _, c := range d.Packages {
		tests := ""
		if c.TestsA != c.TestsB {
			tests = counts(c.TestsA, c.InA) + " -> " + counts(c.TestsB, c.InB)
		}
		if math.Abs(c.Delta()) < minPackage && tests == "" && c.InA && c.InB {
			same++
			continue
		}
		t.row(c.Name, secs(c.A, c.InA), secs(c.B, c.InB), delta(c.Delta()), tests)
	}
	if same > 0 {
		t.notes = append(t.notes, fmt.Sprintf("(%d more, each within %gs and with the same tests)", same, minPackage))
	}
	return t.write(w)
}

func (b Budget) testsCPU() float64 {
	var s float64
	for _, st := range b.Stages {
		if st.Name == testsummary.TestsStage {
			s += st.CPUSeconds
		}
	}
	return s
}

func (b Budget) hasTests() bool {
	for _, st := range b.Stages {
		if st.Name == testsummary.TestsStage {
			return true
		}
	}
	return false
}

func describe(b Budget) string {
	commit := b.Commit
	if commit == "" {
		commit = "commit unknown"
	}
	return fmt.Sprintf("%s, started %s, %d CPUs, load %.2f %.2f %.2f", commit, b.Started.UTC().Format(time.DateTime+" MST"),
		b.Machine.CPUs, b.Machine.LoadAtStart[0], b.Machine.LoadAtStart[1], b.Machine.LoadAtStart[2])
}

func secs(s float64, present bool) string {
	if !present {
		return "-"
	}
	return fmt.Sprintf("%.1fs", s)
}

func delta(d float64) string {
	if math.Abs(d) < 0.05 {
		return "0.0s"
	}
	return fmt.Sprintf("%+.1fs", d)
}

func intDelta(d int) string {
	if d == 0 {
		return "0"
	}
	return fmt.Sprintf("%+d", d)
}

func percent(a, b float64) string {
	if a == 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", (b-a)/a*100)
}

func counts(c Counts, present bool) string {
	if !present {
		return "-"
	}
	return fmt.Sprintf("%d/%d/%d", c.Passed, c.Failed, c.Skipped)
}

// table lays out a title, then rows: the first column left-aligned, the others right-aligned,
// two spaces apart, then notes.
type table struct {
	title string
	rows  [][]string
	notes []string
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	b.WriteString("\n" + t.title + "\n")
	if len(t.rows) == 1 { // the column names alone
		t.rows = nil
	}
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			if i == 0 {
				line.WriteString("  " + c + strings.Repeat(" ", width[0]-len(c)))
			} else {
				line.WriteString("  " + strings.Repeat(" ", width[i]-len(c)) + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	for _, n := range t.notes {
		b.WriteString("  " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
