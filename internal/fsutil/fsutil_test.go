package fsutil

import (
	"os"
	"path/filepath"
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
