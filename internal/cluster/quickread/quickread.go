// Package quickread reads, without nuv's providers, what `nuv cluster list` and `nuv cluster
// status NAME` show of the clusters this machine knows without asking a cloud: the records of the
// directory state store, the local clusters (their record, their pid files and a count of Ready
// nodes over REST) and whether any kind cluster is marked as nuv's. It is what the slim `nuv`
// (package front) answers those verbs with; it links no provider, no cloud SDK and not
// client-go's typed clients, and does nothing at init.
//
// It reads exactly as the providers do (package state's Dir, package localkube), and where it cannot
// vouch for giving the same answer (a record in an older format, one it cannot decode) it says so
// (ErrUnsure), so the caller hands the command to nuv's full program instead of answering
// differently. TestMirrorsTheProviders holds its types to the providers' and package front's
// TestClusterVerbsSameAsFull its answers to the full program's.
package quickread

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/paths"
)

// ErrUnsure is what a reader returns for a state it cannot answer for as nuv's full program would.
var ErrUnsure = errors.New("not answered by the quick reader")

// Record is the part of a state record (package state's Record, stored as <name>.json in the
// directory store) the cluster verbs show. Its fields have the types of state.Record's, so a record
// decodes here exactly when it decodes there.
type Record struct {
	Name      string             `json:"name"`
	Provider  string             `json:"provider"`
	Phase     string             `json:"phase"`
	Spec      *spec.Cluster      `json:"spec,omitempty"`
	Resources []cluster.Resource `json:"resources,omitempty"`
	ExpiresAt *time.Time         `json:"expiresAt,omitempty"`
	Error     string             `json:"error,omitempty"`
	Created   time.Time          `json:"created"`
	// CreatedBy is who wrote the record first (user@host).
	CreatedBy string    `json:"createdBy,omitempty"`
	Updated   time.Time `json:"updated"`
	// Generation counts writes; a backend refuses a write based on an older generation.
	Generation int64           `json:"generation"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// StoreDir is the directory of the state store location names (as $NUV_STATE or --state give
// it: "" for the default under home, dir:PATH, or a path); ok is false for a store that is not a
// directory (kube:...) or a location that does not parse, which the caller leaves to the full
// program.
func StoreDir(location, home string) (dir string, ok bool) {
	switch {
	case location == "":
		return paths.Locator{Home: home}.StateStore(), true
	case strings.HasPrefix(location, "kube:"):
		return "", false
	case strings.HasPrefix(location, "dir:"):
		return strings.TrimPrefix(location, "dir:"), true
	case strings.Contains(location, ":") && !strings.HasPrefix(location, "/"):
		return "", false
	}
	return location, true
}

// LoadRecord reads cluster name's record from the directory store dir; nil when there is none or
// it does not decode (as the cluster verbs treat it: no record).
func LoadRecord(dir, name string) *Record {
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return nil
	}
	return decodeRecord(name, b)
}

// Records reads every record of the directory store dir, in name order, leaving out those that do
// not decode (the verbs skip them too).
func Records(dir string) []*Record {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	var out []*Record
	for _, f := range files {
		if r := LoadRecord(dir, strings.TrimSuffix(filepath.Base(f), ".json")); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// decodeRecord decodes a record as the directory store does: the first JSON value, naming the
// cluster of its file and a provider.
func decodeRecord(name string, b []byte) *Record {
	var r Record
	if err := json.NewDecoder(strings.NewReader(string(b))).Decode(&r); err != nil {
		return nil
	}
	if r.Name != name || r.Provider == "" {
		return nil
	}
	return &r
}

// KindMarked reports whether nuv marked any kind cluster under home (<home>/kind/NAME/
// control-plane.id): without a mark `nuv cluster list` shows no kind cluster and asks no container
// runtime.
func KindMarked(home string) bool {
	marks, _ := filepath.Glob(filepath.Join(home, "kind", "*", "control-plane.id"))
	return len(marks) > 0
}
