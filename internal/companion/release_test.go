package companion

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReleaseURL(t *testing.T) {
	for _, tc := range []struct{ mirror, want, err string }{
		{mirror: "", want: "https://github.com/nuv-dev/nuv/releases/download/v1.2.0/nuv-kube_1.2.0_linux_amd64.tar.gz"},
		{mirror: "https://mirror.example/nuv/1.2.0/", want: "https://mirror.example/nuv/1.2.0/nuv-kube_1.2.0_linux_amd64.tar.gz"},
		{mirror: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080/nuv-kube_1.2.0_linux_amd64.tar.gz"},
		{mirror: "http://[::1]:8080/dist", want: "http://[::1]:8080/dist/nuv-kube_1.2.0_linux_amd64.tar.gz"},
		{mirror: "http://localhost/dist", want: "http://localhost/dist/nuv-kube_1.2.0_linux_amd64.tar.gz"},
		{mirror: "http://mirror.example/nuv", err: "want an https:// URL (or http:// to a loopback address)"},
		{mirror: "ftp://127.0.0.1/nuv", err: "want an https:// URL"},
		{mirror: "dist/", err: "want an https:// URL"},
	} {
		b := Builder{Getenv: func(k string) string { return map[string]string{EnvReleaseMirror: tc.mirror}[k] },
			Release: &Release{Version: "1.2.0"}}
		got, err := b.ReleaseURL("nuv-kube_1.2.0_linux_amd64.tar.gz")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("mirror %q: %q, %v; want an error with %q", tc.mirror, got, err, tc.err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("mirror %q: %q, %v; want %q", tc.mirror, got, err, tc.want)
		}
	}
}

// TestUnpackRefuses: an archive that is not what a release writes is refused whole.
func TestUnpackRefuses(t *testing.T) {
	a := ReleaseArchive{Name: "nuv-node", Programs: []Program{{Name: "nuv-node"}, {Name: "nuv-pause"}}}
	type entry struct {
		name string
		typ  byte
	}
	reg := func(n string) entry { return entry{n, tar.TypeReg} }
	for _, tc := range []struct {
		name    string
		entries []entry
		err     string
	}{
		{"both programs", []entry{reg("nuv-node"), reg("nuv-pause")}, ""},
		{"a program missing", []entry{reg("nuv-node")}, "no nuv-pause in the archive"},
		{"an extra file", []entry{reg("nuv-node"), reg("nuv-pause"), reg("evil")}, `unexpected entry "evil"`},
		{"a path", []entry{reg("../nuv-node"), reg("nuv-pause")}, `unexpected entry "../nuv-node"`},
		{"a symlink", []entry{{"nuv-node", tar.TypeSymlink}, reg("nuv-pause")}, `unexpected entry "nuv-node"`},
		{"twice", []entry{reg("nuv-node"), reg("nuv-node"), reg("nuv-pause")}, `unexpected entry "nuv-node"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.tar.gz")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			gz := gzip.NewWriter(f)
			tw := tar.NewWriter(gz)
			for _, e := range tc.entries {
				h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o755}
				body := "#!/bin/sh\n"
				if e.typ == tar.TypeReg {
					h.Size = int64(len(body))
				} else {
					h.Linkname = "/bin/sh"
				}
				if err := tw.WriteHeader(h); err != nil {
					t.Fatal(err)
				}
				if e.typ == tar.TypeReg {
					tw.Write([]byte(body))
				}
			}
			tw.Close()
			gz.Close()
			f.Close()
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			err = unpack(path, out, a)
			if tc.err == "" {
				if err != nil || !IsExecutable(filepath.Join(out, "nuv-node")) || !IsExecutable(filepath.Join(out, "nuv-pause")) {
					t.Fatalf("unpack: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrRefused) {
				t.Fatalf("unpack: %v; want a refusal with %q", err, tc.err)
			}
			if _, err := os.Stat(filepath.Join(dir, "nuv-node")); err == nil {
				t.Errorf("unpack wrote outside its directory")
			}
		})
	}
}
