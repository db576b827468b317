package addons

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// AddonStatus is one installed add-on as the cluster has it now.
type AddonStatus struct {
	Record
	// Indexed is the version the index defines ("" when the index does not define it).
	Indexed string
	// Ready is true when every waited-for object of its inventory is ready; NotReady says which is not.
	Ready    bool
	NotReady string
	// Missing counts inventory objects that no longer exist.
	Missing int
}

// Status reads the installed add-ons and checks their objects now.
func Status(ctx context.Context, t *Target, idx *Index) ([]AddonStatus, error) {
	records, err := t.Records(ctx)
	if err != nil {
		return nil, err
	}
	var out []AddonStatus
	for _, r := range records {
		st := AddonStatus{Record: *r, Ready: true}
		if idx != nil && idx.Get(r.Name) != nil {
			st.Indexed = idx.Get(r.Name).Version
		}
		for _, ref := range r.Inventory {
			u, err := t.get(ctx, ref)
			if err != nil {
				return nil, fmt.Errorf("add-on %s: %s: %w", r.Name, ref, err)
			}
			if u == nil {
				st.Missing++
				continue
			}
			if check := readiness(ref.Kind); check != nil && st.Ready {
				if ok, why := check(u); !ok {
					st.Ready, st.NotReady = false, ref.String()+": "+why
				}
			}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PrintStatus writes statuses as a table.
func PrintStatus(w io.Writer, cluster string, sts []AddonStatus) {
	if len(sts) == 0 {
		fmt.Fprintf(w, "cluster %s: no add-ons installed\n", cluster)
		return
	}
	fmt.Fprintf(w, "cluster %s: %d add-on(s) installed\n", cluster, len(sts))
	fmt.Fprintf(w, "  %-20s %-10s %-10s %-14s %-7s %s\n", "NAME", "VERSION", "INDEX", "HASH", "OBJECTS", "STATE")
	for _, s := range sts {
		idx := s.Indexed
		if idx == "" {
			idx = "-"
		}
		state := "ready"
		if !s.Ready {
			state = "not ready: " + s.NotReady
		}
		if s.Missing > 0 {
			state += fmt.Sprintf("; %d object(s) missing", s.Missing)
		}
		h := strings.TrimPrefix(s.Hash, "sha256:")
		if len(h) > 12 {
			h = h[:12]
		}
		fmt.Fprintf(w, "  %-20s %-10s %-10s %-14s %-7d %s\n", s.Name, s.Version, idx, h, len(s.Inventory), state)
	}
}

// PrintList writes the index's add-ons and stacks as a table.
func PrintList(w io.Writer, idx *Index) {
	fmt.Fprintf(w, "%s: %d add-on(s), %d stack(s)\n", idx.File, len(idx.Addons), len(idx.Stacks))
	fmt.Fprintf(w, "  %-20s %-10s %-16s %-24s %s\n", "NAME", "VERSION", "NAMESPACE", "DEPENDS ON", "SOURCE")
	def := map[string]bool{}
	for _, n := range idx.Default {
		def[n] = true
	}
	for _, a := range idx.Addons {
		ns := a.Namespace
		if ns == "" {
			ns = "-"
		}
		deps := strings.Join(a.DependsOn, ",")
		if deps == "" {
			deps = "-"
		}
		src := a.SourceString()
		var notes []string
		if !def[a.Name] {
			notes = append(notes, "on request")
		}
		if len(a.Selector.Types) > 0 {
			notes = append(notes, "types "+strings.Join(a.Selector.Types, ","))
		}
		if a.KubernetesVersion != "" {
			notes = append(notes, "kubernetes "+a.KubernetesVersion)
		}
		if len(notes) > 0 {
			src += " [" + strings.Join(notes, "; ") + "]"
		}
		fmt.Fprintf(w, "  %-20s %-10s %-16s %-24s %s\n", a.Name, a.Version, ns, deps, src)
	}
	for _, s := range idx.Stacks {
		desc := ""
		if s.Description != "" {
			desc = ": " + s.Description
		}
		fmt.Fprintf(w, "  stack %-14s %s%s\n", s.Name, strings.Join(s.Addons, ", "), desc)
	}
}
