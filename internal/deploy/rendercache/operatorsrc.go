package rendercache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// OperatorMain is the main package of the operator `nuv operator` runs on a local cluster's host,
// relative to source: $NUV_OPERATOR_MAIN, else <operator dir>/cmd/whisk-operator.
func OperatorMain(source string, getenv func(string) string) string {
	if m := getenv("NUV_OPERATOR_MAIN"); m != "" {
		return m
	}
	return "./" + filepath.ToSlash(relTo(source, filepath.Join(OperatorDir(source, getenv), "cmd", "whisk-operator")))
}

func relTo(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

// OperatorSourceHash hashes what the host operator's binary is built from: go.mod, go.sum and
// every .go file under the operator directory except its manifests (config/), by their paths
// relative to source, and the main package. It keys the binary in nuv's cache, and a release
// stamps the hash of its own sources (version.OperatorSources) so that an installed nuv runs the
// released reference operator for a project whose operator is the release's, without Go.
func OperatorSourceHash(source string, getenv func(string) string) (string, error) {
	h := sha256.New()
	var files []string
	for _, f := range []string{"go.mod", "go.sum"} {
		files = append(files, filepath.Join(source, f))
	}
	root := OperatorDir(source, getenv)
	// WalkDir does not enter a root that is a symbolic link (a project linking the operator
	// directory): walk what it points to, so the sources really key the binary
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(root, "config") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash operator sources: %w", err)
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", relTo(source, f), len(data))
		h.Write(data)
	}
	fmt.Fprintf(h, "main %s\n", OperatorMain(source, getenv))
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
