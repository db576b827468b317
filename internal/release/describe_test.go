package release

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/image/imagetest"
)

// TestDescribe works out versions of real git work trees: a tag at HEAD, none, a dirty tree,
// SOURCE_DATE_EPOCH.
func TestDescribe(t *testing.T) {
	const commitTime = 1767225600 // imagetest.GitEnv's commit date
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		env     map[string]string
		version string // "<short>" stands for the commit's first 12 hex digits
		epoch   int64
		err     string
	}{
		{name: "tag", setup: func(t *testing.T, dir string) { imagetest.Git(t, dir, "tag", "v1.4.0") }, version: "1.4.0", epoch: commitTime},
		{name: "highest of two tags", setup: func(t *testing.T, dir string) {
			imagetest.Git(t, dir, "tag", "v1.10.0")
			imagetest.Git(t, dir, "tag", "v1.9.0")
		}, version: "1.10.0", epoch: commitTime},
		{name: "snapshot", version: "0.0.0-SNAPSHOT-<short>", epoch: commitTime},
		{name: "dirty", setup: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, version: "0.0.0-SNAPSHOT-<short>-dirty", epoch: commitTime},
		{name: "SOURCE_DATE_EPOCH", env: map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}, version: "0.0.0-SNAPSHOT-<short>", epoch: 1700000000},
		{name: "bad SOURCE_DATE_EPOCH", env: map[string]string{"SOURCE_DATE_EPOCH": "yesterday"}, err: `SOURCE_DATE_EPOCH="yesterday"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			imagetest.Git(t, dir, "init", "-q")
			imagetest.GoModule(t, dir)
			if c.setup != nil {
				c.setup(t, dir)
			}
			s, err := Describe(context.Background(), dir, func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			head := imagetest.Git(t, dir, "rev-parse", "HEAD")
			want := strings.ReplaceAll(c.version, "<short>", head[:12])
			if s.Version != want || s.Commit != head || s.Epoch != c.epoch {
				t.Errorf("Describe = %+v, want version %s, commit %s, epoch %d", s, want, head, c.epoch)
			}
		})
	}
	if _, err := Describe(context.Background(), t.TempDir(), noEnv); err == nil || !strings.Contains(err.Error(), "git rev-parse HEAD") {
		t.Errorf("Describe of a directory outside git: %v", err)
	}
}

// TestMainRefuses: bad command lines and output directories fail with a message naming the value,
// before anything is built.
func TestMainRefuses(t *testing.T) {
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad platform", []string{"-platforms", "linux"}, 1, `-platforms: platform "linux": want os/arch`},
		{"image without linux", []string{"-platforms", "darwin/arm64", "-registry", "127.0.0.1:5000"}, 1, "the image needs a linux platform"},
		{"bad registry", []string{"-platforms", "linux/amd64", "-registry", "UPPER CASE"}, 1, "REGISTRY=UPPER CASE"},
		{"foreign output directory", []string{"-dir", moduleDir(t), "-platforms", "host", "-out", foreign}, 1, "holds notes.txt, which is no release file"},
		{"extra argument", []string{"now"}, 2, `unexpected arguments ["now"]`},
		{"unknown flag", []string{"-fast"}, 2, "flag provided but not defined: -fast"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), c.args, &out, &errb, noEnv)
			if code != c.code || !strings.Contains(errb.String(), c.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), c.code, c.msg)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(foreign, "notes.txt")); err != nil {
		t.Errorf("the foreign file is gone: %v", err)
	}
}

func TestIsReleaseFile(t *testing.T) {
	for name, want := range map[string]bool{
		"checksums.txt":                          true,
		"nuv_1.0.0_linux_amd64.tar.gz":           true,
		"nuv_1.0.0_linux_amd64.sbom.json":        true,
		"nuv_1.0.0_linux_amd64.tar.gz.tmp12345":  true,
		".nuv_1.0.0_linux_amd64.sbom.json.tmp-9": true,
		".checksums.txt.tmp-77":                  true,
		"nuv_1.0.0_linux_amd64.zip":              false,
		"notes.txt":                              false,
		"nuv":                                    false,
		".tmp":                                   false,
	} {
		if got := isReleaseFile(name); got != want {
			t.Errorf("isReleaseFile(%q) = %v, want %v", name, got, want)
		}
	}
}
