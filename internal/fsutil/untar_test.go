package fsutil

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entry is one member of a test archive.
type entry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func archive(t *testing.T, entries []entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Size: int64(len(e.body))}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// TestUntar: files keep their permission bits, links are made, and nothing is written outside the
// target directory, whether by a path that climbs out or through a symbolic link the archive made.
func TestUntar(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name    string
		entries []entry
		wantErr string
		check   func(t *testing.T, dir string)
	}{
		{name: "files, modes and links", entries: []entry{
			{name: "bin/", typ: tar.TypeDir, mode: 0o755},
			{name: "bin/run", typ: tar.TypeReg, mode: 0o755, body: "#!/bin/sh\n"},
			{name: "docs/readme", typ: tar.TypeReg, mode: 0o400, body: "hi\n"},
			{name: "latest", typ: tar.TypeSymlink, link: "bin/run"},
		}, check: func(t *testing.T, dir string) {
			if st, err := os.Stat(filepath.Join(dir, "bin", "run")); err != nil || st.Mode().Perm() != 0o755 {
				t.Errorf("bin/run: %v %v, want mode 0755", st, err)
			}
			if st, err := os.Stat(filepath.Join(dir, "docs", "readme")); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("docs/readme: %v %v, want 0400 widened to the owner's 0600", st, err)
			}
			if l, err := os.Readlink(filepath.Join(dir, "latest")); err != nil || l != "bin/run" {
				t.Errorf("latest: %q %v, want a link to bin/run", l, err)
			}
		}},
		{name: "a path that climbs out", entries: []entry{
			{name: "../escaped", typ: tar.TypeReg, mode: 0o644, body: "x"},
		}, wantErr: `archive entry "../escaped" leaves the target directory`},
		{name: "a file through a link the archive made", entries: []entry{
			{name: "docs/", typ: tar.TypeDir, mode: 0o755},
			{name: "docs/out", typ: tar.TypeSymlink, link: outside},
			{name: "docs/out/planted", typ: tar.TypeReg, mode: 0o644, body: "x\n"},
		}, wantErr: `"docs/out/planted" goes through the symbolic link docs/out`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Untar(archive(t, tc.entries), dir)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Untar: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Untar: %v, want an error saying %q", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, dir)
			}
			if _, err := os.Stat(filepath.Join(outside, "planted")); !os.IsNotExist(err) {
				t.Errorf("a file was written through the link (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escaped")); !os.IsNotExist(err) {
				t.Errorf("a file was written outside the target (%v)", err)
			}
		})
	}
}
