//go:build !linux

package update

import (
	"errors"
	"fmt"
	"os"
)

// swap puts the directory src in place of dst (two renames; see swapRenames).
func swap(src, dst string) error {
	if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("install %s: %w", dst, err)
		}
		return nil
	}
	return swapRenames(src, dst)
}
