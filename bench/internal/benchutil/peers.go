package benchutil

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// GoTaskVersion is the stock go-task CLI the benchmarks measure nuv against (the version go.mod
// requires).
const GoTaskVersion = "v3.54.0"

// InstallGoTask installs the stock go-task CLI into dir with `go install` (announced on stdout,
// the build's output on stderr) and returns the binary's path.
func InstallGoTask(dir string) (string, error) {
	fmt.Printf("installing go-task %s (GOBIN=%s go install) ...\n", GoTaskVersion, dir)
	install := exec.Command("go", "install", "github.com/go-task/task/v3/cmd/task@"+GoTaskVersion)
	install.Env = append(os.Environ(), "GOBIN="+dir)
	install.Stdout, install.Stderr = os.Stderr, os.Stderr
	if err := install.Run(); err != nil {
		return "", fmt.Errorf("install go-task: %w", err)
	}
	return filepath.Join(dir, "task"), nil
}

// ProcFields reads a /proc file of "Key:   123 kB" lines (status, smaps_rollup) into a map of
// each key's first number.
func ProcFields(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if fs := strings.Fields(v); len(fs) > 0 {
			if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
				m[k] = n
			}
		}
	}
	return m, sc.Err()
}
