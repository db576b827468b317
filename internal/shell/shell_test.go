package shell

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLinkDir(t *testing.T) {
	home := t.TempDir()
	exe := filepath.Join(t.TempDir(), "nuv")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"nuv", "task", "retry"}
	// Concurrent nuv processes race to create the directory; all must get the same complete one.
	var wg sync.WaitGroup
	dirs := make([]string, 8)
	errs := make([]error, 8)
	for i := range dirs {
		wg.Add(1)
		go func() { defer wg.Done(); dirs[i], errs[i] = LinkDir(home, exe, names) }()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("LinkDir #%d = %q, %v; want %q", i, dirs[i], errs[i], dirs[0])
		}
	}
	for _, n := range names {
		if target, err := os.Readlink(filepath.Join(dirs[0], n)); err != nil || target != exe {
			t.Errorf("%s -> %q, %v; want %s", n, target, err, exe)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(home, "links", ".tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary directories left behind: %v", leftovers)
	}
	// Another binary gets its own directory; the first stays intact.
	other, err := LinkDir(home, exe+"-2", names)
	if err != nil || other == dirs[0] {
		t.Errorf("LinkDir(other exe) = %q, %v", other, err)
	}
	// A stale directory (links to an old binary) is replaced.
	if err := os.Remove(filepath.Join(dirs[0], "retry")); err != nil {
		t.Fatal(err)
	}
	if again, err := LinkDir(home, exe, names); err != nil || again != dirs[0] || !linksOK(again, exe, names) {
		t.Errorf("stale directory not repaired: %q, %v", again, err)
	}
}

func TestLinkDirUnwritableHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(home, 0o500)
	if os.Geteuid() == 0 {
		// root writes through permission bits; procfs refuses new entries even to root
		home = "/proc/nuv-unwritable-home"
	}
	_, err := LinkDir(home, "/bin/true", []string{"nuv"})
	if err == nil || !strings.Contains(err.Error(), home) {
		t.Errorf("err %v, want one naming %s", err, home)
	}
}

func TestLinkDirHomeIsAFile(t *testing.T) {
	home := filepath.Join(t.TempDir(), "file")
	os.WriteFile(home, nil, 0o600)
	_, err := LinkDir(home, "/bin/true", []string{"nuv"})
	if err == nil || !strings.Contains(err.Error(), home) {
		t.Errorf("err %v, want one naming %s", err, home)
	}
}

func TestPrependPath(t *testing.T) {
	cases := []struct{ dir, path, want string }{
		{"/l", "/usr/bin:/bin", "/l:/usr/bin:/bin"},
		{"/l", "/usr/bin:/l:/bin", "/l:/usr/bin:/bin"},
		{"/l", "", "/l"},
	}
	for _, tc := range cases {
		if got := PrependPath(tc.dir, tc.path); got != tc.want {
			t.Errorf("PrependPath(%q, %q) = %q, want %q", tc.dir, tc.path, got, tc.want)
		}
	}
}

func TestRunCoreUtilsWithoutPath(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	script := "mkdir -p x/y && echo hi > x/y/f && ls x && cat x/y/f && rm -r x && ls"
	err := RunString(context.Background(), script, Options{Dir: dir, Env: []string{"PATH="}, Stdout: &out, Stderr: &errb})
	if err != nil || out.String() != "y\nhi\n" {
		t.Errorf("err %v, out %q, stderr %q", err, out.String(), errb.String())
	}
	err = RunString(context.Background(), "ls", Options{Dir: dir, Env: []string{"PATH="}, NoCoreUtils: true, Stdout: &out, Stderr: &errb})
	if ExitStatus(err) != 127 {
		t.Errorf("without core utils and PATH, ls should not be found: %v", err)
	}
	if got := ExitStatus(RunString(context.Background(), "exit 3", Options{Dir: dir})); got != 3 {
		t.Errorf("ExitStatus = %d, want 3", got)
	}
}
