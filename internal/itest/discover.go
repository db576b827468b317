// Package itest is nuv's declarative integration-test engine (`nuv itest`).
//
// A test is a directory of numbered step files; the suites are tests/itest/<test>/ plus the
// selected cluster type's tests/<type>/itest/<test>/. A type directory overlays the common one file
// by file: a file of the same name replaces the common step, a new file adds a step, and a test
// found only under the type runs only on clusters of that type.
//
// Step files run in name order and are named NN-<op>[-what].yaml, op being one of
//
//	apply    objects to server-side apply (created or updated)
//	assert   objects that must come to match (partial match: every field given must be equal;
//	         a list matches when each given element matches some element) within the timeout
//	error    objects that must not exist (or must not match the fields given) within the timeout
//	delete   objects to delete; the step waits until they are gone
//	reject   objects the API server must refuse (validation negative cases)
//	command  a shell script (run by nuv's embedded POSIX shell) that must exit 0
//
// A file may start with a document of kind Step (apiVersion itest.nuv.dev/v1) with options:
// timeout (a Go duration), script (command steps), expectFail (command steps), errorContains
// (reject steps). ${NAMESPACE}, ${TEST}, ${KUBE}, ${NUV_CLUSTER} and environment variables are
// substituted in every file; an unset variable is an error naming it and the file.
//
// Each test runs in its own namespace (itest-<test>-<random>), which objects without a namespace
// land in, and which is deleted afterwards with everything the test created (objects the test
// applied elsewhere, cluster-scoped or in another namespace, are deleted too).
package itest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// Op is what a step does.
type Op string

// The step operations.
const (
	OpApply   Op = "apply"
	OpAssert  Op = "assert"
	OpError   Op = "error"
	OpDelete  Op = "delete"
	OpReject  Op = "reject"
	OpCommand Op = "command"
)

var ops = map[Op]bool{OpApply: true, OpAssert: true, OpError: true, OpDelete: true, OpReject: true, OpCommand: true}

// StepFile is one step of a test.
type StepFile struct {
	// Name is the file name without extension, e.g. "02-assert-ready".
	Name string
	Path string
	N    int
	Op   Op
}

// Test is one test directory (after the type overlay).
type Test struct {
	Name  string
	Steps []StepFile
}

var stepName = lazy.MustCompile(`^(\d+)-([a-z]+)(?:-[A-Za-z0-9_.-]*)?\.ya?ml$`)

// ParseStepFile parses a step file name; ok is false for files that are not steps (README.md,
// shared YAML a command step reads, ...), err is set for a numbered file with an unknown op.
func ParseStepFile(name string) (StepFile, bool, error) {
	m := stepName.FindStringSubmatch(name)
	if m == nil {
		return StepFile{}, false, nil
	}
	n, _ := strconv.Atoi(m[1])
	op := Op(m[2])
	if !ops[op] {
		return StepFile{}, false, fmt.Errorf("step file %s: unknown operation %q (use apply, assert, error, delete, reject or command)", name, op)
	}
	return StepFile{Name: strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml"), N: n, Op: op}, true, nil
}

// SuiteDirs are the directories holding the tests for a cluster type, common first.
func SuiteDirs(project, kubeType string) []string {
	dirs := []string{filepath.Join(project, "tests", "itest")}
	if kubeType != "" {
		dirs = append(dirs, filepath.Join(project, "tests", kubeType, "itest"))
	}
	return dirs
}

// Discover returns the tests found in dirs (later directories overlay earlier ones), sorted by
// name, keeping those whose name starts with prefix.
func Discover(dirs []string, prefix string) ([]Test, error) {
	files := map[string]map[string]string{} // test -> file name -> path
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tests in %s: %w", d, err)
		}
		for _, e := range ents {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			tdir := filepath.Join(d, e.Name())
			inner, err := os.ReadDir(tdir)
			if err != nil {
				return nil, fmt.Errorf("test %s: %w", tdir, err)
			}
			for _, f := range inner {
				if f.IsDir() {
					continue
				}
				if _, ok, err := ParseStepFile(f.Name()); err != nil {
					return nil, fmt.Errorf("%s: %w", tdir, err)
				} else if !ok {
					continue
				}
				if files[e.Name()] == nil {
					files[e.Name()] = map[string]string{}
				}
				files[e.Name()][f.Name()] = filepath.Join(tdir, f.Name())
			}
		}
	}
	var tests []Test
	for name, fs := range files {
		t := Test{Name: name}
		for fname, path := range fs {
			sf, _, _ := ParseStepFile(fname)
			sf.Path = path
			t.Steps = append(t.Steps, sf)
		}
		sort.Slice(t.Steps, func(i, j int) bool {
			a, b := t.Steps[i], t.Steps[j]
			if a.N != b.N {
				return a.N < b.N
			}
			return a.Name < b.Name
		})
		tests = append(tests, t)
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].Name < tests[j].Name })
	return tests, nil
}
