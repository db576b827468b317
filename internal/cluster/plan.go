package cluster

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Resource is one thing a provider makes for a cluster: a control plane, a node group, a VPC, a
// role. Desired resources come from a spec, actual ones from Observe; the engine compares their
// Fields to plan changes.
type Resource struct {
	// Kind and Name identify the resource within its cluster ("node-group", "workers").
	Kind string `json:"kind"`
	Name string `json:"name"`
	// ID is the provider's identifier once the resource exists ("vpc-0a1b...", a state directory).
	ID string `json:"id,omitempty"`
	// Fields are the properties compared between desired and actual, as strings.
	Fields map[string]string `json:"fields,omitempty"`
	// Replace lists the fields whose change can only be made by replacing the resource.
	Replace []string `json:"replace,omitempty"`
	// DependsOn lists keys (Kind/Name) of resources that must exist first and go last.
	DependsOn []string `json:"dependsOn,omitempty"`
	// Foreign marks an existing resource that nuv did not make: it is never changed or deleted.
	Foreign bool `json:"foreign,omitempty"`
	// Broken, set by Observe, says why an existing resource of nuv's cannot be brought to its spec
	// in place (a create interrupted half-way): the plan replaces it and prints the reason.
	Broken string `json:"broken,omitempty"`
}

// Key identifies the resource within its cluster: "kind/name".
func (r Resource) Key() string { return r.Kind + "/" + r.Name }

// KindOf is the kind in a resource key ("subnet" of "subnet/private-a").
func KindOf(key string) string {
	k, _, _ := strings.Cut(key, "/")
	return k
}

// Action is what a plan does to one resource.
type Action string

// Plan actions.
const (
	Create  Action = "create"
	Update  Action = "update"
	Replace Action = "replace"
	Delete  Action = "delete"
	// Conflict: a resource of that name exists but is not nuv's; it is left alone and blocks apply.
	Conflict Action = "conflict"
)

// FieldChange is one field that differs.
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
	// ForcesReplace is set when this field cannot be changed in place.
	ForcesReplace bool `json:"forcesReplace,omitempty"`
}

// Change is one step of a plan.
type Change struct {
	Action  Action
	Key     string
	Desired *Resource // nil for Delete
	Actual  *Resource // nil for Create
	Fields  []FieldChange
	// Reason says why a change is made when its fields alone do not (the actual resource's Broken).
	Reason string
}

// Plan is the ordered list of changes that bring a cluster to its spec.
type Plan struct {
	Cluster  string
	Provider string
	Changes  []Change
	// Unchanged counts the resources that already match.
	Unchanged int
}

// Empty reports whether nothing would change.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Count returns how many changes have action a.
func (p *Plan) Count(a Action) int {
	n := 0
	for _, c := range p.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Diff computes the plan that turns actual into desired. Creates, updates and replacements come in
// dependency order (desired's order among independent resources); deletions of what the spec no
// longer asks for come last, dependents first. It fails on a dependency cycle or a dangling
// dependency.
func Diff(clusterName, provider string, desired, actual []Resource) (*Plan, error) {
	order, err := topo(desired)
	if err != nil {
		return nil, err
	}
	have := map[string]*Resource{}
	for i := range actual {
		have[actual[i].Key()] = &actual[i]
	}
	p := &Plan{Cluster: clusterName, Provider: provider}
	wanted := map[string]bool{}
	for _, d := range order {
		d := d
		wanted[d.Key()] = true
		a, ok := have[d.Key()]
		switch {
		case !ok:
			p.Changes = append(p.Changes, Change{Action: Create, Key: d.Key(), Desired: &d, Fields: fieldsOf(d)})
		case a.Foreign:
			p.Changes = append(p.Changes, Change{Action: Conflict, Key: d.Key(), Desired: &d, Actual: a})
		case a.Broken != "":
			p.Changes = append(p.Changes, Change{Action: Replace, Key: d.Key(), Desired: &d, Actual: a, Fields: compare(d, *a), Reason: a.Broken})
		default:
			fc := compare(d, *a)
			if len(fc) == 0 {
				p.Unchanged++
				continue
			}
			act := Update
			for _, f := range fc {
				if f.ForcesReplace {
					act = Replace
				}
			}
			p.Changes = append(p.Changes, Change{Action: act, Key: d.Key(), Desired: &d, Actual: a, Fields: fc})
		}
	}
	var gone []Resource
	for _, a := range actual {
		if !wanted[a.Key()] && !a.Foreign {
			gone = append(gone, a)
		}
	}
	for _, a := range deleteOrder(gone) {
		a := a
		p.Changes = append(p.Changes, Change{Action: Delete, Key: a.Key(), Actual: &a})
	}
	return p, nil
}

// DeleteAll is the plan that removes every resource of actual that nuv made, dependents first.
func DeleteAll(clusterName, provider string, actual []Resource) *Plan {
	p := &Plan{Cluster: clusterName, Provider: provider}
	var mine []Resource
	for _, a := range actual {
		if !a.Foreign {
			mine = append(mine, a)
		}
	}
	for _, a := range deleteOrder(mine) {
		a := a
		p.Changes = append(p.Changes, Change{Action: Delete, Key: a.Key(), Actual: &a})
	}
	return p
}

func fieldsOf(d Resource) []FieldChange {
	var out []FieldChange
	for _, k := range slices.Sorted(maps.Keys(d.Fields)) {
		if d.Fields[k] != "" {
			out = append(out, FieldChange{Field: k, New: d.Fields[k]})
		}
	}
	return out
}

// compare lists the desired fields whose actual value differs.
func compare(d, a Resource) []FieldChange {
	var out []FieldChange
	for _, k := range slices.Sorted(maps.Keys(d.Fields)) {
		if d.Fields[k] != a.Fields[k] {
			out = append(out, FieldChange{Field: k, Old: a.Fields[k], New: d.Fields[k], ForcesReplace: slices.Contains(d.Replace, k)})
		}
	}
	return out
}

// topo orders resources so that each comes after what it depends on, keeping the given order
// among independent ones.
func topo(rs []Resource) ([]Resource, error) {
	idx := map[string]int{}
	for i, r := range rs {
		if _, dup := idx[r.Key()]; dup {
			return nil, fmt.Errorf("resource %s is listed twice", r.Key())
		}
		idx[r.Key()] = i
	}
	for _, r := range rs {
		for _, d := range r.DependsOn {
			if _, ok := idx[d]; !ok {
				return nil, fmt.Errorf("resource %s depends on %s, which is not part of the cluster", r.Key(), d)
			}
		}
	}
	const (
		unseen = iota
		visiting
		done
	)
	mark := make([]int, len(rs))
	var out []Resource
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch mark[i] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("dependency cycle: %s", strings.Join(append(path, rs[i].Key()), " -> "))
		}
		mark[i] = visiting
		for _, d := range rs[i].DependsOn {
			if err := visit(idx[d], append(path, rs[i].Key())); err != nil {
				return err
			}
		}
		mark[i] = done
		out = append(out, rs[i])
		return nil
	}
	for i := range rs {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deleteOrder orders resources so that each goes before what it depends on (dependencies on
// resources outside the list are ignored).
func deleteOrder(rs []Resource) []Resource {
	in := map[string]bool{}
	for _, r := range rs {
		in[r.Key()] = true
	}
	trimmed := make([]Resource, len(rs))
	for i, r := range rs {
		r.DependsOn = slices.DeleteFunc(slices.Clone(r.DependsOn), func(d string) bool { return !in[d] })
		trimmed[i] = r
	}
	sort.SliceStable(trimmed, func(a, b int) bool { return trimmed[a].Key() < trimmed[b].Key() })
	ordered, err := topo(trimmed)
	if err != nil { // actual state with a cycle: delete in name order
		ordered = trimmed
	}
	slices.Reverse(ordered)
	// Restore the original dependencies for the caller.
	orig := map[string]Resource{}
	for _, r := range rs {
		orig[r.Key()] = r
	}
	for i := range ordered {
		ordered[i] = orig[ordered[i].Key()]
	}
	return ordered
}
