package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name    string
		mode    os.FileMode
		dirMode os.FileMode
	}{
		{"secret file gets a private directory", 0o600, 0o700},
		{"shared file gets a shared directory", 0o644, 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			p := filepath.Join(dir, "f")
			if err := WriteFileAtomic(p, []byte("one"), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := WriteFileAtomic(p, []byte("two"), tt.mode); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != "two" {
				t.Fatalf("content = %q, %v; want two", got, err)
			}
			st, _ := os.Stat(p)
			if st.Mode().Perm() != tt.mode {
				t.Errorf("file mode = %v, want %v", st.Mode().Perm(), tt.mode)
			}
			dst, _ := os.Stat(dir)
			if dst.Mode().Perm() != tt.dirMode {
				t.Errorf("dir mode = %v, want %v", dst.Mode().Perm(), tt.dirMode)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("temporary files left behind: %v", entries)
			}
		})
	}
}

// Concurrent writers never leave a mix: the file always holds one writer's whole content.
func TestWriteFileAtomicConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "current")
	contents := map[string]bool{}
	var wg sync.WaitGroup
	for i := range 8 {
		data := string(rune('a'+i)) + string(make([]byte, 4096))
		contents[data] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := WriteFileAtomic(p, []byte(data), 0o600); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, _ := os.ReadFile(p)
	if !contents[string(got)] {
		t.Fatalf("file holds a mix of writes (%d bytes)", len(got))
	}
}

func TestWriteFileAtomicUnwritable(t *testing.T) {
	// root ignores directory permissions, so the unwritable place is a path under a regular file.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	err := WriteFileAtomic(filepath.Join(f, "x"), []byte("x"), 0o600)
	if err == nil {
		t.Fatal("writing under a regular file succeeded")
	}
}

// fillFiles returns a PublishDir fill that writes the named files (content: the name and tag) and
// a valid that accepts a directory holding all of them.
func fillFiles(tag string, names ...string) (func(string) error, func(string) bool) {
	fill := func(tmp string) error {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(tmp, n), []byte(n+tag), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	valid := func(dir string) bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
				return false
			}
		}
		return true
	}
	return fill, valid
}

func TestPublishDir(t *testing.T) {
	tests := []struct {
		name    string
		before  func(dst string) // what is at dst beforehand
		fillErr error
		wantErr bool
		want    []string // entries of dst afterwards
		mode    os.FileMode
	}{
		{name: "new directory", want: []string{"a", "b"}, mode: 0o755},
		{name: "private mode", want: []string{"a", "b"}, mode: 0o700},
		{name: "a valid directory stays", before: func(dst string) {
			os.Mkdir(dst, 0o755)
			for _, n := range []string{"a", "b", "old"} {
				os.WriteFile(filepath.Join(dst, n), nil, 0o644)
			}
		}, want: []string{"a", "b", "old"}, mode: 0o755},
		{name: "a stale directory is replaced", before: func(dst string) {
			os.Mkdir(dst, 0o755)
			os.WriteFile(filepath.Join(dst, "a"), nil, 0o644)
		}, want: []string{"a", "b"}, mode: 0o755},
		{name: "a stale file is replaced", before: func(dst string) {
			os.WriteFile(dst, nil, 0o644)
		}, want: []string{"a", "b"}, mode: 0o755},
		{name: "fill fails: nothing published", fillErr: os.ErrInvalid, wantErr: true, mode: 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "d")
			if tt.before != nil {
				tt.before(dst)
			}
			fill, valid := fillFiles("", "a", "b")
			if tt.fillErr != nil {
				fill = func(string) error { return tt.fillErr }
			}
			err := PublishDir(dst, tt.mode, fill, valid)
			if (err != nil) != tt.wantErr {
				t.Fatalf("PublishDir = %v, want error %v", err, tt.wantErr)
			}
			entries, _ := os.ReadDir(parent)
			if want := len(tt.want); want > 0 && len(entries) != 1 || want == 0 && len(entries) != 0 {
				t.Errorf("parent holds %v (temporary directories left behind?)", entries)
			}
			if tt.want == nil {
				return
			}
			var got []string
			inner, _ := os.ReadDir(dst)
			for _, e := range inner {
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("dst holds %v, want %v", got, tt.want)
			}
			if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != tt.mode {
				t.Errorf("dst mode %v, %v; want %v", st.Mode().Perm(), err, tt.mode)
			}
		})
	}
}

// Concurrent publishers all succeed and dst is one publisher's complete directory.
func TestPublishDirConcurrent(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "d")
	names := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fill, valid := fillFiles(strconv.Itoa(i), names...)
			errs[i] = PublishDir(dst, 0o755, fill, valid)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("publisher %d: %v", i, err)
		}
	}
	tag := ""
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dst, n))
		if err != nil {
			t.Fatal(err)
		}
		if tag == "" {
			tag = strings.TrimPrefix(string(b), n)
		}
		if string(b) != n+tag {
			t.Errorf("%s holds %q: a mix of publishers (first tag %q)", n, b, tag)
		}
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("parent holds %v, want only d", entries)
	}
}

func TestEachFile(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.txt", "sub/b.txt", "sub/deeper/c.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a.txt"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		src  string
		want []string
	}{
		{dir, []string{"a.txt", "sub/b.txt", "sub/deeper/c.txt"}}, // the symlink is not a regular file
		{filepath.Join(dir, "sub"), []string{"b.txt", "deeper/c.txt"}},
		{filepath.Join(dir, "a.txt"), []string{"."}},
	}
	for _, tt := range tests {
		var got []string
		if err := EachFile(tt.src, func(_, rel string) error { got = append(got, filepath.ToSlash(rel)); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("EachFile(%s) = %v, want %v", tt.src, got, tt.want)
		}
	}
	if err := EachFile(filepath.Join(dir, "missing"), func(string, string) error { return nil }); err == nil {
		t.Error("a missing source is an error")
	}
}

// TestDirectorySyncedAfterRename: the rename that publishes a file or a directory is made durable
// by syncing the directory it happened in, after the new name is in place (a host crash right
// after WriteFileAtomic returns must not bring back the old content).
func TestDirectorySyncedAfterRename(t *testing.T) {
	type call struct{ dir, seen string }
	var calls []call
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	root := t.TempDir()
	file := filepath.Join(root, "state", "rec.json")
	pub := filepath.Join(root, "pub")
	syncDir = func(dir string) error {
		c := call{dir: dir}
		if b, err := os.ReadFile(file); err == nil {
			c.seen = string(b)
		}
		if _, err := os.Stat(filepath.Join(pub, "x")); err == nil {
			c.seen = "published"
		}
		calls = append(calls, c)
		return orig(dir)
	}
	tests := []struct {
		name string
		run  func() error
		want call
	}{
		{"WriteFileAtomic", func() error { return WriteFileAtomic(file, []byte("new"), 0o600) }, call{filepath.Dir(file), "new"}},
		{"PublishDir", func() error {
			return PublishDir(pub, 0o755, func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "x"), nil, 0o644) },
				func(string) bool { return false })
		}, call{root, "published"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = nil
			if err := tt.run(); err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 || calls[0] != tt.want {
				t.Fatalf("directory syncs: %+v, want one of %s after the rename (%+v)", calls, tt.want.dir, tt.want)
			}
		})
	}
}

func TestSHA256File(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := SHA256File(p)
	if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; err != nil || got != want {
		t.Fatalf("SHA256File = %q, %v; want %q", got, err, want)
	}
	if _, err := SHA256File(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("SHA256File of a missing file: no error")
	}
}
