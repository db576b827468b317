//go:build linux

package update

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// swap puts the directory src in place of dst. When dst exists the two are exchanged in one
// renameat2(RENAME_EXCHANGE) so readers see the old tree or the new one, never none; where that is
// unsupported it falls back to two renames, restoring the old tree if the second fails.
func swap(src, dst string) error {
	if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("install %s: %w", dst, err)
		}
		return nil
	}
	if err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE); err == nil {
		return os.RemoveAll(src) // src now holds the old tree
	}
	return swapRenames(src, dst)
}
