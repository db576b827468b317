package kubebin

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// parseSum finds the SHA-256 of name in a checksum file: with name "", the file holds one sum (the
// dl.k8s.io <binary>.sha256 form, optionally followed by a file name); otherwise it is a sha256sum
// listing ("<hex>  <name>" per line, a '*' before the name for binary mode). A file without the
// entry is an error naming the entry and the platform.
func parseSum(data []byte, name, platform, url string) (string, error) {
	text := string(data)
	if name == "" {
		f := strings.Fields(text)
		if len(f) == 0 || !isSHA256(f[0]) {
			return "", fmt.Errorf("checksum file %s does not hold a SHA-256 sum", url)
		}
		return strings.ToLower(f[0]), nil
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || !isSHA256(f[0]) {
			continue
		}
		if strings.TrimPrefix(f[1], "*") == name {
			return strings.ToLower(f[0]), nil
		}
	}
	return "", fmt.Errorf("checksum file %s has no entry for %s: it does not cover %s", url, name, platform)
}

func isSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}
