package update

import (
	"fmt"
	"os"
	"path/filepath"
)

// swapRenames replaces dst with src by two renames, restoring dst if the second one fails.
func swapRenames(src, dst string) error {
	old := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".old")
	os.RemoveAll(old)
	if err := os.Rename(dst, old); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		if rerr := os.Rename(old, dst); rerr != nil {
			return fmt.Errorf("replace %s: %w (and restoring the old copy from %s failed: %v)", dst, err, old, rerr)
		}
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	return os.RemoveAll(old)
}
