// Package leftover finds the containers, volumes and networks a run left on container runtimes.
// The test command records what each runtime it started has before the tests (Take) and, at its
// end whatever happened, asks again (Left): whatever appeared since was made by the run and not
// cleaned up, e.g. a kind node container a test failed to delete. Objects are told apart by id, so
// a container removed and made again under the same name counts as new.
package leftover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Runtime is a container runtime's CLI (docker or podman, which take the same listing commands),
// run with the environment of the caller (DOCKER_HOST, CONTAINERS_CONF select the instance).
type Runtime struct {
	// Name is the program ("docker", "podman", or a path).
	Name string
}

// Object is a container, volume or network.
type Object struct {
	Kind string `json:"kind"` // container, volume, network
	ID   string `json:"id"`   // volumes have none: their name is their identity
	Name string `json:"name"`
}

func (o Object) String() string {
	if o.ID == "" || o.ID == o.Name {
		return o.Kind + " " + o.Name
	}
	return fmt.Sprintf("%s %s (%s)", o.Kind, o.Name, o.ID)
}

func (o Object) key() string {
	if o.ID != "" {
		return o.Kind + "/" + o.ID
	}
	return o.Kind + "/" + o.Name
}

// listings are the commands that list each kind of object, one object a line: id TAB name.
var listings = []struct {
	kind string
	args []string
}{
	{"container", []string{"ps", "-a", "--no-trunc", "--format", "{{.ID}}\t{{.Names}}"}},
	{"volume", []string{"volume", "ls", "--format", "\t{{.Name}}"}},
	{"network", []string{"network", "ls", "--no-trunc", "--format", "{{.ID}}\t{{.Name}}"}},
}

// List returns every container, volume and network the runtime has.
func List(ctx context.Context, rt Runtime) ([]Object, error) {
	var all []Object
	for _, l := range listings {
		cmd := exec.CommandContext(ctx, rt.Name, l.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w: %s", rt.Name, strings.Join(l.args[:2], " "), err, strings.TrimSpace(stderr.String()))
		}
		objs, err := parse(l.kind, out)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.Name, strings.Join(l.args[:2], " "), err)
		}
		all = append(all, objs...)
	}
	return all, nil
}

// parse reads a listing of kind: "id<TAB>name" lines (the id may be empty).
func parse(kind string, out []byte) ([]Object, error) {
	var objs []Object
	for _, line := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		id, name, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("unexpected line %q (want id, tab, name)", line)
		}
		objs = append(objs, Object{Kind: kind, ID: strings.TrimSpace(id), Name: strings.TrimSpace(name)})
	}
	return objs, nil
}

// Snapshot is what each runtime had when it was taken, by runtime name.
type Snapshot map[string][]Object

// Take lists every runtime.
func Take(ctx context.Context, rts []Runtime) (Snapshot, error) {
	s := Snapshot{}
	for _, rt := range rts {
		objs, err := List(ctx, rt)
		if err != nil {
			return nil, err
		}
		s[rt.Name] = objs
	}
	return s, nil
}

// Save writes the snapshot to file (atomically).
func (s Snapshot) Save(file string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(file, append(b, '\n'), 0o600)
}

// Load reads a snapshot Save wrote.
func Load(file string) (Snapshot, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: not a snapshot of runtime objects: %w", file, err)
	}
	return s, nil
}

// New returns the objects of now that were not in before, sorted by kind and name.
func New(before, now []Object) []Object {
	had := map[string]bool{}
	for _, o := range before {
		had[o.key()] = true
	}
	var out []Object
	for _, o := range now {
		if !had[o.key()] {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Left lists each runtime of the snapshot again and returns what appeared since, by runtime
// (runtimes with nothing new are left out).
func Left(ctx context.Context, before Snapshot) (map[string][]Object, error) {
	left := map[string][]Object{}
	for name, objs := range before {
		now, err := List(ctx, Runtime{Name: name})
		if err != nil {
			return nil, err
		}
		if n := New(objs, now); len(n) > 0 {
			left[name] = n
		}
	}
	return left, nil
}

// Report is the lines that name what a run left, one runtime after the other.
func Report(left map[string][]Object) []string {
	var names []string
	for n := range left {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []string
	for _, n := range names {
		for _, o := range left[n] {
			lines = append(lines, n+": "+o.String())
		}
	}
	return lines
}
