package fsutil

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

// SHA256File returns the hex SHA-256 of the file at path (what checksum files and release sums
// hold).
func SHA256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := f.WriteTo(h); err != nil {
		return "", fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
