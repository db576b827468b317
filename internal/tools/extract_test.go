package tools

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

type entry struct {
	name, body string
	mode       int64
}

func makeTarGz(t *testing.T, path string, entries []entry) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func makeZip(t *testing.T, path string, entries []entry) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := os.FileMode(0o644)
		if e.mode != 0 {
			mode = os.FileMode(e.mode)
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExtract(t *testing.T) {
	entries := []entry{
		{name: "README.md", body: "read me"},
		{name: "bin/linux/kubectl", body: "#!binary", mode: 0o755},
	}
	archives := map[string]func(*testing.T, string, []entry){"tools.tar.gz": makeTarGz, "tools.zip": makeZip}
	cases := []toolCase{
		{name: "all", args: []string{"ARCHIVE"}, check: func(t *testing.T, dir string) {
			fileIs("README.md", "read me")(t, dir)
			fileIs("bin/linux/kubectl", "#!binary")(t, dir)
			if st, err := os.Stat(filepath.Join(dir, "bin/linux/kubectl")); err != nil || st.Mode().Perm()&0o100 == 0 {
				t.Errorf("kubectl lost its executable bit: %v %v", st, err)
			}
		}},
		{name: "by base name into -C", args: []string{"-C", "out", "ARCHIVE", "kubectl"}, check: func(t *testing.T, dir string) {
			fileIs("out/kubectl", "#!binary")(t, dir)
			fileIs("out/README.md", "")(t, dir)
		}},
		{name: "by path", args: []string{"ARCHIVE", "bin/linux/kubectl"}, check: fileIs("kubectl", "#!binary")},
		{name: "missing entry", args: []string{"ARCHIVE", "helm"}, code: 1, errHas: "has no entry helm"},
	}
	for archive, make := range archives {
		for _, tc := range cases {
			t.Run(archive+" "+tc.name, func(t *testing.T) {
				tc.tool = "extract"
				tc.args = append([]string(nil), tc.args...)
				for i, a := range tc.args {
					if a == "ARCHIVE" {
						tc.args[i] = archive
					}
				}
				tc.prepare = func(t *testing.T, dir string) { make(t, filepath.Join(dir, archive), entries) }
				tc.run(t)
			})
		}
	}
}

func TestExtractRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	makeTarGz(t, filepath.Join(dir, "evil.tgz"), []entry{{name: "../escaped.txt", body: "x"}})
	r := runTool(t, dir, "extract", []string{"-C", "sub", "evil.tgz"}, "", nil)
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.txt")); err == nil {
		t.Error("an entry was written outside the target directory")
	}
	r = runTool(t, dir, "extract", []string{"no-such.tgz"}, "", nil)
	if r.code != 1 {
		t.Errorf("missing archive: exit %d, want 1", r.code)
	}
}

func TestSh(t *testing.T) {
	cases := []toolCase{
		{name: "command with args", args: []string{"-c", `mkdir -p a/b && echo "$1-$2" > a/b/f && cat a/b/f && ls a`, "x", "y"}, out: "x-y\nb\n"},
		{name: "exit status", args: []string{"-c", "exit 4"}, code: 4},
		{name: "stdin script", stdin: "echo from stdin", out: "from stdin\n"},
		{name: "file", args: []string{"s.sh", "arg"}, prepare: write("s.sh", `echo "file $1"`), out: "file arg\n"},
		{name: "syntax error", args: []string{"-c", "if then"}, code: 2, errHas: "-sh:"},
	}
	for _, tc := range cases {
		tc.tool = "sh"
		t.Run(tc.name, tc.run)
	}
}

// TestExtractBzip2 uses bzip2(1) to make the archive (Go has no bzip2 writer); it fails without it
// (hack/test.sh installs it).
func TestExtractBzip2(t *testing.T) {
	bz, err := exec.LookPath("bzip2")
	if err != nil {
		t.Fatalf("bzip2 is required to make this test's archive and is not on PATH (hack/test.sh installs it): %v", err)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "bin/helm", Mode: 0o755, Size: 4, Typeflag: tar.TypeReg})
	tw.Write([]byte("helm"))
	tw.Close()
	cmd := exec.Command(bz, "-c")
	cmd.Stdin = &buf
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "helm.tar.bz2"), out, 0o644)
	if r := runTool(t, dir, "extract", []string{"helm.tar.bz2", "helm"}, "", nil); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	fileIs("helm", "helm")(t, dir)
}
