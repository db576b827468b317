package tools

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
)

func extractTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("extract", "[-C DIR] ARCHIVE [ENTRY...]", `
Extracts a .zip, .tar, or gzip- or bzip2-compressed tar (.tar.gz, .tgz, .tar.bz2) archive into DIR (default: the current
directory); the format is detected from the content. Without ENTRY every entry is extracted with
its path. Each ENTRY names an entry by its path or its base name (e.g. "kubectl" for
"bin/linux/kubectl") and is written as DIR/<base name>; a missing ENTRY is an error. Entries that
would land outside DIR are refused; file modes (the executable bit) are kept.`, `nuv -extract -C bin kubectl.tar.gz kubectl
nuv -extract chart.zip`)
	dir := f.StringP("directory", "C", ".", "extract into this directory")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() == 0 {
		return f.usagef("no ARCHIVE given")
	}
	x := extractor{dir: absIn(env.Dir, *dir), want: map[string]bool{}}
	for _, e := range f.Args()[1:] {
		x.want[e] = false
	}
	if err := x.extract(absIn(env.Dir, f.Arg(0))); err != nil {
		return failf("extract", "%s: %v", f.Arg(0), err)
	}
	var missing []string
	for _, e := range f.Args()[1:] {
		if !x.want[e] {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		return failf("extract", "%s has no entry %s", f.Arg(0), strings.Join(missing, ", "))
	}
	return nil
}

// extractor writes archive entries under dir; want (when not empty) selects entries by path or
// base name and records which were found.
type extractor struct {
	dir  string
	want map[string]bool
}

func (x *extractor) extract(archive string) error {
	file, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer file.Close()
	br := bufio.NewReader(file)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte("PK\x03\x04")) || bytes.HasPrefix(magic, []byte("PK\x05\x06")):
		st, err := file.Stat()
		if err != nil {
			return err
		}
		return x.zip(file, st.Size())
	case bytes.HasPrefix(magic, []byte("BZh")):
		return x.tar(bzip2.NewReader(br))
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer gz.Close()
		return x.tar(gz)
	default:
		return x.tar(br)
	}
}

// target returns where an entry goes, or "" when it is not selected.
func (x *extractor) target(name string) (string, error) {
	clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(name), "./"))
	if len(x.want) > 0 {
		base := path.Base(clean)
		switch {
		case hasKey(x.want, clean):
			x.want[clean] = true
		case hasKey(x.want, name):
			x.want[name] = true
		case hasKey(x.want, base):
			x.want[base] = true
		default:
			return "", nil
		}
		return filepath.Join(x.dir, base), nil
	}
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("entry %q would be written outside %s", name, x.dir)
	}
	return filepath.Join(x.dir, filepath.FromSlash(clean)), nil
}

func hasKey(m map[string]bool, k string) bool { _, ok := m[k]; return ok }

func (x *extractor) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not a readable tar or zip archive: %w", err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if len(x.want) == 0 {
				if err := x.mkdir(h.Name); err != nil {
					return err
				}
			}
		case tar.TypeReg:
			if err := x.file(h.Name, h.FileInfo().Mode(), tr); err != nil {
				return err
			}
		}
	}
}

func (x *extractor) zip(r io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return err
	}
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			if len(x.want) == 0 {
				if err := x.mkdir(zf.Name); err != nil {
					return err
				}
			}
			continue
		}
		if !zf.Mode().IsRegular() {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		err = x.file(zf.Name, zf.Mode(), rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) mkdir(name string) error {
	dst, err := x.target(name)
	if err != nil || dst == "" {
		return err
	}
	return os.MkdirAll(dst, 0o755)
}

func (x *extractor) file(name string, mode os.FileMode, r io.Reader) error {
	dst, err := x.target(name)
	if err != nil || dst == "" {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm()|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	return errors.Join(err, out.Close())
}
