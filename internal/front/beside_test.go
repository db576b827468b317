package front

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/taskrun"
	"github.com/nuv-dev/nuv/internal/version"
)

// goBuild builds the module's package pkg into out without cgo, stamped as version v, with more go
// build flags.
func goBuild(t *testing.T, pkg, out, v string, flags ...string) {
	t.Helper()
	goBuildEnv(t, []string{"CGO_ENABLED=0"}, pkg, out, v, flags...)
}

// goBuildEnv is goBuild with more environment (none: the build configuration of the tests
// themselves, whose compiled packages it shares).
func goBuildEnv(t *testing.T, env []string, pkg, out, v string, flags ...string) {
	t.Helper()
	args := append([]string{"build", "-ldflags=" + version.Ldflags(v, "0123456789abcdef0123456789abcdef01234567")}, flags...)
	cmd := exec.Command("go", append(args, "-o", out, pkg)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// TestInstalledFindsFullBeside lays nuv out as a release archive installs it: the slim nuv and a
// program of the same version as nuv-full side by side, `task` a symlink to nuv from another
// directory. With no Go on PATH and empty caches, the command line is handed to the program
// beside nuv (here nuv's pod sandbox program, which answers -v, stands in as the full program:
// built from this module with the same stamp), nothing is built or cached; a nuv-full of another
// version is refused with a message naming both versions. Once the task program (cmd/nuv-task) is
// beside the full program, `task` and `nuv -task` run there; one of another version than the full
// program is refused naming both.
func TestInstalledFindsFullBeside(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nuv")
	}
	install := t.TempDir()
	nuv := filepath.Join(install, "nuv")
	goBuild(t, "./nuv", nuv, "0.1.0-test")
	goBuild(t, "./cmd/nuv-pause", filepath.Join(install, FullName), "0.1.0-test")
	sameFull := filepath.Join(t.TempDir(), "nuv-full-same")
	goBuild(t, "./cmd/nuv-pause", sameFull, "0.1.0-test")
	task := filepath.Join(t.TempDir(), TaskName)
	// the task program links go-task: built as the tests are, from packages they compiled
	goBuildEnv(t, nil, "./cmd/nuv-task", task, "0.1.0-test")
	other := filepath.Join(t.TempDir(), "nuv-full-9.9.9")
	goBuild(t, "./cmd/nuv-pause", other, "9.9.9")
	// -trimpath builds outside git (as a release made in a git worktree): their build information
	// names no version, so nuv asks them (slim nuv builds stand in: they answer -version)
	trimmedSame := filepath.Join(t.TempDir(), "nuv-full-trimmed")
	goBuild(t, "./nuv", trimmedSame, "0.1.0-test", "-trimpath", "-buildvcs=false")
	trimmedOther := filepath.Join(t.TempDir(), "nuv-full-trimmed-9.9.9")
	goBuild(t, "./nuv", trimmedOther, "9.9.9", "-trimpath", "-buildvcs=false")
	links := t.TempDir()
	if err := os.Symlink(nuv, filepath.Join(links, "task")); err != nil {
		t.Fatal(err)
	}
	home, cache := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "NUV_CACHE_DIR=" + cache, "PATH=" + links, "NUV_FULL="}
	run := func(prog string, args ...string) (string, int) {
		cmd := exec.Command(prog, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %v: %v", prog, args, err)
		}
		return string(out), code
	}

	goTask := strings.TrimPrefix(taskrun.TaskVersion(), "v") + "\n"
	cases := []struct {
		name     string
		full     string // the nuv-full installed beside nuv
		task     string // the nuv-task installed beside it
		prog     string
		args     []string
		out      []string
		exitCode int
	}{
		{"nuv -full names the program beside it", "", "", nuv, []string{"-full"}, []string{filepath.Join(install, FullName) + "\n"}, 0},
		{"task hands over through the symlink", "", "", filepath.Join(links, "task"), []string{"-v"}, []string{"nuv-pause\n"}, 0},
		{"nuv -version answers itself", "", "", nuv, []string{"-version"}, []string{"0.1.0-test commit 0123456789abcdef0123456789abcdef01234567\n"}, 0},
		{"another version is refused", other, "", nuv, []string{"-full"}, []string{"is nuv-full 9.9.9 (commit", "is 0.1.0-test (commit", "install nuv and nuv-full from one archive"}, 1},
		{"and through task too", other, "", filepath.Join(links, "task"), []string{"-v"}, []string{"is nuv-full 9.9.9", "is 0.1.0-test"}, 1},
		{"a trimmed build of the same version is asked", trimmedSame, "", nuv, []string{"-full"}, []string{filepath.Join(install, FullName) + "\n"}, 0},
		{"again, from the kept answer", "", "", nuv, []string{"-full"}, []string{filepath.Join(install, FullName) + "\n"}, 0},
		{"a trimmed build of another version is refused", trimmedOther, "", nuv, []string{"-full"}, []string{"is nuv-full 9.9.9 (commit 0123456789ab)", "is 0.1.0-test (commit 0123456789ab)"}, 1},
		// the task program beside the full program runs Taskfiles (go-task's --version answers)
		{"task runs Taskfiles in nuv-task beside nuv-full", sameFull, task, filepath.Join(links, "task"), []string{"--version"}, []string{goTask}, 0},
		{"and nuv -task too", "", "", nuv, []string{"-task", "--version"}, []string{goTask}, 0},
		{"a nuv-task of another version is refused", "", other, filepath.Join(links, "task"), []string{"--version"}, []string{"is nuv-task 9.9.9", "the full program beside it", "is 0.1.0-test"}, 1},
		{"other commands still go to nuv-full", "", "", nuv, []string{"-full"}, []string{filepath.Join(install, FullName) + "\n"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.task != "" {
				data, err := os.ReadFile(c.task)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(install, TaskName), data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if c.full != "" {
				data, err := os.ReadFile(c.full)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(install, FullName), data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			out, code := run(c.prog, c.args...)
			if code != c.exitCode {
				t.Errorf("exit %d, want %d; output:\n%s", code, c.exitCode, out)
			}
			for _, w := range c.out {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
			if c.exitCode == 0 && len(c.out) == 1 && out != c.out[0] {
				t.Errorf("output %q, want exactly %q", out, c.out[0])
			}
		})
	}
	// nothing built or cached but the answers of the two trimmed builds and the records of the
	// checks that passed (each pair of programs checked once)
	files := map[string]int{}
	err := filepath.WalkDir(cache, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(cache, path)
			files[filepath.Dir(rel)]++
		}
		return err
	})
	if err != nil || len(files) != 2 || files["nuv-full/beside"] != 2 || files["nuv-full/checked"] == 0 {
		t.Errorf("the cache %s holds files in %v (%v): want the two answers in nuv-full/beside and the checks' records in nuv-full/checked only", cache, files, err)
	}
}

// TestBesideNone: without nuv-full beside it, Beside says so and leaves the choice to the cache.
func TestBesideNone(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "nuv")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := Beside(self, version.Self(), t.TempDir()); p != "" || err != nil {
		t.Errorf("Beside = %q, %v; want none", p, err)
	}
	if err := os.WriteFile(filepath.Join(dir, FullName), []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Beside(self, version.Self(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not an executable file") {
		t.Errorf("a non-executable nuv-full: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, FullName), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Beside(self, version.Self(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "read the build information of "+filepath.Join(dir, FullName)) {
		t.Errorf("a nuv-full that is no Go program: %v", err)
	}
}

// TestInstalledEmulatorBeside: installed as a release archive lays nuv out, `nuv emulator` runs in
// the nuv-emulator beside the full program (here nuv's pod sandbox program stands in as the full
// program: built with the same stamp), with no Go and empty caches; a nuv-emulator of another
// version is refused naming both versions; without one, the message says where it belongs.
func TestInstalledEmulatorBeside(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nuv and nuv-emulator")
	}
	install := t.TempDir()
	nuv := filepath.Join(install, "nuv")
	goBuild(t, "./nuv", nuv, "0.1.0-test")
	goBuild(t, "./cmd/nuv-pause", filepath.Join(install, FullName), "0.1.0-test")
	emulator := filepath.Join(t.TempDir(), EmulatorName)
	// the emulators link the cloud SDKs: built as the tests are, from packages they compiled
	goBuildEnv(t, nil, "./cmd/nuv-emulator", emulator, "0.1.0-test")
	other := filepath.Join(t.TempDir(), "nuv-emulator-9.9.9")
	goBuild(t, "./cmd/nuv-pause", other, "9.9.9")
	home, cache := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "NUV_HOME=" + filepath.Join(home, "nuv"), "NUV_CACHE_DIR=" + cache, "PATH=" + t.TempDir(), "NUV_FULL="}
	nuvRun := func(args ...string) (string, int) {
		cmd := exec.Command(nuv, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("nuv %v: %v", args, err)
		}
		return string(out), code
	}
	install1 := func(src string) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(install, EmulatorName), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	if out, code := nuvRun("emulator", "status"); code != 1 || !strings.Contains(out, "there is none beside nuv's full program "+filepath.Join(install, FullName)) || !strings.Contains(out, "./cmd/"+EmulatorName) {
		t.Errorf("no nuv-emulator: exit %d, %q; want exit 1 saying where it belongs", code, out)
	}
	install1(emulator)
	for _, c := range []struct {
		args []string
		code int
		out  []string
	}{
		{[]string{"emulator"}, 0, []string{"Usage: nuv emulator <verb>"}},
		{[]string{"emulator", "status"}, 1, []string{"emulator: stopped\nazure emulator: stopped\nGKE emulator: stopped\n"}},
		{[]string{"emulator", "statsu"}, 2, []string{`nuv emulator: unknown verb "statsu"; did you mean "status"?`}},
		{[]string{"emulator", "faults", "--cloud", "ibm"}, 2, []string{`nuv emulator faults: --cloud "ibm": accepted values: aws, azure, gcp`}},
	} {
		if out, code := nuvRun(c.args...); code != c.code || !containsAll(out, c.out) {
			t.Errorf("nuv %q: exit %d, %q; want exit %d with %q", c.args, code, out, c.code, c.out)
		}
	}
	install1(other)
	if out, code := nuvRun("emulator", "status"); code != 1 || !containsAll(out, []string{"is nuv-emulator 9.9.9", "the full program beside it", "is 0.1.0-test", "install nuv, nuv-full and nuv-emulator from one archive"}) {
		t.Errorf("a nuv-emulator of another version: exit %d, %q; want it refused naming both versions", code, out)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
