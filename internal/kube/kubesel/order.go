package kubesel

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
)

// OrderPath is the file recording the order in which the project's clusters appeared in clusters/
// (one name a line, first seen first): the numbering of `nuv kube list` and `task N`.
func OrderPath(project string) string { return filepath.Join(paths.ProjectState(project), "order") }

// Ordered numbers names (the kubeconfigs now in clusters/, any order) stably: names recorded in
// .nuv/order keep their relative order, names never seen before follow in name order, and names
// whose kubeconfig is gone are dropped (a cluster added again counts as new). So adding a
// kubeconfig never renumbers the others; removing one moves the later ones up. The record is
// updated when it changed (atomically, best effort: a read-only project still lists, numbered by
// the order it would have recorded).
func Ordered(project string, names []string) []string {
	present := map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	var recorded []string
	if data, err := os.ReadFile(OrderPath(project)); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(recorded, l) {
				recorded = append(recorded, l)
			}
		}
	}
	out := make([]string, 0, len(names))
	for _, n := range recorded {
		if present[n] {
			out = append(out, n)
			delete(present, n)
		}
	}
	var fresh []string
	for n := range present {
		fresh = append(fresh, n)
	}
	sort.Strings(fresh)
	out = append(out, fresh...)
	if len(out) > 0 && !slices.Equal(out, recorded) {
		_ = fsutil.WriteFileAtomic(OrderPath(project), []byte(strings.Join(out, "\n")+"\n"), 0o644)
	}
	return out
}
