package testbudget

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMakeWriteRead(t *testing.T) {
	start := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	in := Input{Started: start, Commit: "baa8a23", CPUs: 2, Load: [3]float64{3.47, 1.19, 0.43},
		StageFile: "testdata/stages.tsv", EventFile: "testdata/events.json"}
	b, err := Make(in, start.Add(90*time.Minute+500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if b.WallSeconds != 5400.5 || b.Commit != "baa8a23" || b.Machine.CPUs != 2 || b.Machine.LoadAtStart[0] != 3.47 {
		t.Errorf("budget %+v", b)
	}
	if len(b.Stages) != 4 || b.Stages[1].Name != "full program" || b.Stages[1].CPUSeconds != 801 || b.Stages[3].OK {
		t.Errorf("stages %+v", b.Stages)
	}
	if b.SetupCPU() != 220.5+801+1.2+9 {
		t.Errorf("setup CPU %v", b.SetupCPU())
	}
	want := []Package{
		{Name: "example.com/a", WallSeconds: 1.25, OK: true, Counts: Counts{Passed: 2, Skipped: 1}},
		{Name: "example.com/b", WallSeconds: 3.5, OK: false, Counts: Counts{Failed: 1}},
		{Name: "example.com/c", WallSeconds: 0.75, OK: false},
	}
	if !reflect.DeepEqual(b.Packages, want) {
		t.Errorf("packages\n%+v\nwant\n%+v", b.Packages, want)
	}
	// c failed outside its tests: one failure more, as the report's closing line counts it
	if b.Tests != (Counts{Passed: 2, Failed: 2, Skipped: 1}) {
		t.Errorf("tests %+v", b.Tests)
	}

	path := filepath.Join(t.TempDir(), "out", "budget.json")
	if err := Write(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, b)
	}
}

// A run that failed before its tests (or before its first stage ended) still has a budget.
func TestMakeWithoutFiles(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1_800_000_000, 0)
	b, err := Make(Input{Started: start, StageFile: filepath.Join(dir, "none.tsv"), EventFile: filepath.Join(dir, "none.json")}, start.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if b.WallSeconds != 1 || len(b.Stages) != 0 || len(b.Packages) != 0 || b.Stages == nil || b.Packages == nil {
		t.Errorf("budget %+v", b)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.tsv")
	if err := os.WriteFile(bad, []byte("vet\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Make(Input{Started: time.Now(), StageFile: bad}, time.Now()); err == nil || !strings.Contains(err.Error(), bad+":1: want 6") {
		t.Errorf("Make with a bad stage file: %v", err)
	}
	notJSON := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notJSON, []byte("PASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(notJSON); err == nil || !strings.Contains(err.Error(), notJSON+" is not a test budget") {
		t.Errorf("Read of a non-budget: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Read of a missing file: %v", err)
	}
}
