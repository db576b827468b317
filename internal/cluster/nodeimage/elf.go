package nodeimage

import (
	"archive/tar"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// libDirs are where the dynamic linker of a Debian amd64/arm64 root file system finds libraries.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/lib", "/usr/lib"}

// elfClosure returns the interpreter and the shared libraries (recursively) that the ELF files
// bins need, as paths inside root: what an image made of bins must also hold. A static binary
// needs nothing.
func elfClosure(root string, bins []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	var visit func(p string) error
	visit = func(p string) error {
		f, err := elf.Open(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b, err := io.ReadAll(prog.Open())
				if err != nil {
					return err
				}
				interp := strings.TrimRight(string(b), "\x00")
				if !seen[interp] {
					seen[interp] = true
					out = append(out, interp)
				}
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, lib := range libs {
			found := ""
			for _, d := range libDirs {
				if _, err := os.Stat(filepath.Join(root, d, lib)); err == nil {
					found = path.Join(d, lib)
					break
				}
			}
			if found == "" {
				return fmt.Errorf("%s needs %s, which %s does not have", p, lib, root)
			}
			if seen[found] {
				continue
			}
			seen[found] = true
			out = append(out, found)
			real, err := resolveIn(root, found)
			if err != nil {
				return err
			}
			if err := visit(filepath.Join(root, real)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, b := range bins {
		if err := visit(b); err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// resolveIn resolves the symbolic links of the absolute path p inside root (as a chroot would).
func resolveIn(root, p string) (string, error) {
	parts := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
	cur := "/"
	for i := 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		st, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			t, err := os.Readlink(filepath.Join(root, next))
			if err != nil {
				return "", err
			}
			if !path.IsAbs(t) {
				t = path.Join(cur, t)
			}
			rest := append(strings.Split(strings.Trim(path.Clean(t), "/"), "/"), parts[i+1:]...)
			parts, i, cur = rest, -1, "/"
			continue
		}
		cur = next
	}
	return cur, nil
}

// treeWriter writes a layer: entries added once each, parents first.
type treeWriter struct {
	tw   *tar.Writer
	seen map[string]bool
}

func newTreeWriter(w io.Writer) *treeWriter {
	return &treeWriter{tw: tar.NewWriter(w), seen: map[string]bool{}}
}

func (t *treeWriter) Close() error { return t.tw.Close() }

func (t *treeWriter) dirs(p string) error {
	d := path.Dir(p)
	if d == "/" || d == "." || t.seen[d] {
		return nil
	}
	if err := t.dirs(d); err != nil {
		return err
	}
	t.seen[d] = true
	return t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755})
}

// Dir adds a directory.
func (t *treeWriter) Dir(p string, mode int64) error {
	if t.seen[p] {
		return nil
	}
	if err := t.dirs(p); err != nil {
		return err
	}
	t.seen[p] = true
	return t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(p, "/") + "/", Mode: mode})
}

// Symlink adds p -> target.
func (t *treeWriter) Symlink(p, target string) error {
	if t.seen[p] {
		return nil
	}
	if err := t.dirs(p); err != nil {
		return err
	}
	t.seen[p] = true
	return t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(p, "/"), Linkname: target, Mode: 0o777})
}

// Bytes adds a file with content b.
func (t *treeWriter) Bytes(p string, b []byte, mode int64) error {
	if err := t.dirs(p); err != nil {
		return err
	}
	t.seen[p] = true
	if err := t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: mode, Size: int64(len(b))}); err != nil {
		return err
	}
	_, err := t.tw.Write(b)
	return err
}

// File adds the host file src as p.
func (t *treeWriter) File(p, src string, mode int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := t.dirs(p); err != nil {
		return err
	}
	t.seen[p] = true
	if err := t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: mode, Size: st.Size()}); err != nil {
		return err
	}
	_, err = io.Copy(t.tw, f)
	return err
}

// FromRoot adds the path p of the root file system root as it is there: the symbolic links on the
// way (a merged /usr's /lib -> usr/lib) and, for a link, its target too. A directory is added
// with everything under it.
func (t *treeWriter) FromRoot(root, p string) error {
	parts := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
	cur := "/"
	for i := 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		host := filepath.Join(root, next)
		st, err := os.Lstat(host)
		if err != nil {
			return err
		}
		last := i == len(parts)-1
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return err
			}
			if err := t.Symlink(next, target); err != nil {
				return err
			}
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			rest := append(strings.Split(strings.Trim(path.Clean(target), "/"), "/"), parts[i+1:]...)
			parts, i, cur = rest, -1, "/"
			continue
		case st.IsDir() && !last:
			if err := t.Dir(next, int64(st.Mode().Perm())); err != nil {
				return err
			}
		case st.IsDir():
			if err := t.Dir(next, int64(st.Mode().Perm())); err != nil {
				return err
			}
			entries, err := os.ReadDir(host)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := t.FromRoot(root, path.Join(next, e.Name())); err != nil {
					return err
				}
			}
		case st.Mode().IsRegular():
			if t.seen[next] {
				return nil
			}
			return t.File(next, host, int64(st.Mode().Perm()))
		}
		cur = next
	}
	return nil
}
