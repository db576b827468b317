package release

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ArchiveMode is the mode of every program in an archive.
const ArchiveMode = 0o755

// WriteArchive writes bins into a gzipped tar at path, atomically: entries sorted by name, each a
// regular file at the archive's top level with mode 0755, owner and group 0 without names, mtime
// at mtime; the gzip header has no name and no time. Identical inputs give identical bytes.
func WriteArchive(path string, bins []Binary, mtime time.Time) (err error) {
	sorted := append([]Binary(nil), bins...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	gz, err := gzip.NewWriterLevel(tmp, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, b := range sorted {
		if err := addFile(tw, b, mtime); err != nil {
			return fmt.Errorf("release: archive %s: %w", path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("release: archive %s: %w", path, err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("release: archive %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("release: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

func addFile(tw *tar.Writer, b Binary, mtime time.Time) error {
	f, err := os.Open(b.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", b.Path)
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     b.Name,
		Mode:     ArchiveMode,
		Size:     st.Size(),
		ModTime:  mtime,
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if n, err := io.Copy(tw, f); err != nil || n != st.Size() {
		return fmt.Errorf("copy %s: %d of %d bytes: %v", b.Path, n, st.Size(), err)
	}
	return nil
}
