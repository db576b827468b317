package addons

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AddonError is an add-on that could not be applied or removed: the object and what was last
// seen about it.
type AddonError struct {
	Addon  string
	Object string
	Err    error
}

func (e *AddonError) Error() string {
	if e.Object != "" {
		return fmt.Sprintf("add-on %s: %s: %v", e.Addon, e.Object, e.Err)
	}
	return fmt.Sprintf("add-on %s: %v", e.Addon, e.Err)
}

func (e *AddonError) Unwrap() error { return e.Err }

// Apply plans (MakePlan) and executes the plan: see Execute.
func Apply(ctx context.Context, t *Target, idx *Index, o Options) (*Plan, error) {
	p, err := MakePlan(ctx, t, idx, o)
	if err != nil {
		return nil, err
	}
	return p, Execute(ctx, t, p, o)
}

// Execute carries out a plan in its order (dependencies first). Each add-on to install or
// upgrade is server-side applied (CRDs first, then waited for Established), waited for (CRDs,
// Deployments, StatefulSets, DaemonSets) with progress on o.Out, pruned of the objects its
// previous version had and this one has not, and only then recorded. Unchanged and skipped
// add-ons are not touched. The first add-on that fails stops the run; those applied before it
// stay applied, those after it are left as they were.
func Execute(ctx context.Context, t *Target, p *Plan, o Options) error {
	w := o.out()
	if p.Changes() == 0 {
		fmt.Fprintf(w, "cluster %s: add-ons up to date, nothing to do\n", t.Name)
		return nil
	}
	if err := t.ensureStateNamespace(ctx); err != nil {
		return fmt.Errorf("cluster %s: %w", t.Name, err)
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		start := time.Now()
		switch s.Action {
		case Install, Upgrade:
			what := s.To
			if s.Action == Upgrade {
				what = s.From + " -> " + s.To
			}
			fmt.Fprintf(w, "%s %s %s (%d objects)\n", s.Action, s.Name, what, len(s.Rendered.Objects))
			if err := t.applyAddon(ctx, s, o); err != nil {
				return err
			}
			fmt.Fprintf(w, "  %s %s ready (%.1fs)\n", s.Name, s.To, time.Since(start).Seconds())
		case Remove:
			fmt.Fprintf(w, "remove %s %s (%s)\n", s.Name, s.From, s.Reason)
			pruneCRDs := s.Record.PruneCRDs
			if s.Addon != nil {
				pruneCRDs = s.Addon.Prune.CRDs
			}
			if err := t.removeAddon(ctx, s.Record, pruneCRDs, o); err != nil {
				return err
			}
			fmt.Fprintf(w, "  %s removed (%.1fs)\n", s.Name, time.Since(start).Seconds())
		}
	}
	return nil
}

func (t *Target) applyAddon(ctx context.Context, s *Step, o Options) error {
	w := o.out()
	objs := s.Rendered.Objects
	var crds, rest []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == "CustomResourceDefinition" || obj.GetKind() == "Namespace" {
			crds = append(crds, obj)
		} else {
			rest = append(rest, obj)
		}
	}
	fail := func(obj string, err error) error { return &AddonError{Addon: s.Name, Object: obj, Err: err} }
	if err := t.ensureNamespace(ctx, s.Addon.Namespace, objs); err != nil {
		return fail("", err)
	}
	for _, obj := range crds {
		if err := t.ssa(ctx, obj); err != nil {
			return fail("", err)
		}
	}
	for _, obj := range crds {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if err := t.waitReady(ctx, s.Name, refOf(obj), o.timeout(), w); err != nil {
			return fail(refOf(obj).String(), err)
		}
	}
	if len(crds) > 0 {
		t.mapper.Reset()
	}
	for _, obj := range rest {
		if err := t.ssa(ctx, obj); err != nil {
			return fail("", err)
		}
	}
	if s.Addon == nil || !s.Addon.Wait.Skip {
		for _, obj := range rest {
			if readiness(obj.GetKind()) == nil {
				continue
			}
			if err := t.waitReady(ctx, s.Name, refOf(obj), o.timeout(), w); err != nil {
				return fail(refOf(obj).String(), err)
			}
		}
	}
	keep := map[string]bool{}
	inv := make([]ObjRef, 0, len(objs))
	for _, obj := range objs {
		r := refOf(obj)
		keep[r.Key()] = true
		inv = append(inv, r)
	}
	if s.Record != nil {
		var stale []ObjRef
		for _, r := range s.Record.Inventory {
			if keep[r.Key()] {
				continue
			}
			if r.Kind == "CustomResourceDefinition" && !s.Addon.Prune.CRDs {
				fmt.Fprintf(w, "  kept %s (no longer in %s %s; prune.crds is off)\n", r, s.Name, s.To)
				continue
			}
			if s.Addon.Prune.Disabled {
				fmt.Fprintf(w, "  left %s in place (no longer in %s %s; prune.disabled)\n", r, s.Name, s.To)
				continue
			}
			stale = append(stale, r)
		}
		sortRefsForDelete(stale)
		for _, r := range stale {
			if err := t.delete(ctx, r); err != nil {
				return fail(r.String(), err)
			}
			fmt.Fprintf(w, "  pruned %s\n", r)
		}
	}
	rec := &Record{Name: s.Name, Version: s.To, Hash: s.Rendered.Hash, Source: s.Addon.SourceString(),
		Description: s.Addon.Description, PruneCRDs: s.Addon.Prune.CRDs, Inventory: inv}
	if err := t.writeRecord(ctx, rec); err != nil {
		return fail("", fmt.Errorf("record: %w", err))
	}
	return nil
}

func sortRefsForDelete(refs []ObjRef) {
	sort.SliceStable(refs, func(i, j int) bool { return kindRank(refs[i].Kind) > kindRank(refs[j].Kind) })
}

// removeAddon deletes an installed add-on's objects (CRDs only with pruneCRDs), newest kinds first,
// waits until they are gone, then deletes its record.
func (t *Target) removeAddon(ctx context.Context, rec *Record, pruneCRDs bool, o Options) error {
	w := o.out()
	refs := append([]ObjRef(nil), rec.Inventory...)
	sortRefsForDelete(refs)
	var deleted []ObjRef
	for _, r := range refs {
		if r.Kind == "CustomResourceDefinition" && !pruneCRDs {
			fmt.Fprintf(w, "  kept %s (prune.crds is off)\n", r)
			continue
		}
		if err := t.delete(ctx, r); err != nil {
			return &AddonError{Addon: rec.Name, Object: r.String(), Err: err}
		}
		deleted = append(deleted, r)
	}
	for _, r := range deleted {
		if err := t.waitGone(ctx, r, o.timeout(), w); err != nil {
			return &AddonError{Addon: rec.Name, Object: r.String(), Err: err}
		}
	}
	return t.deleteRecord(ctx, rec.Name)
}

// RemoveAddons removes installed add-ons: the named ones (names), or every installed one (all).
// It refuses to remove an add-on that another installed add-on, staying, depends on.
func RemoveAddons(ctx context.Context, t *Target, idx *Index, names []string, all bool, o Options) error {
	records, err := t.Records(ctx)
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	if all {
		for n := range records {
			gone[n] = true
		}
	}
	for _, n := range names {
		gone[n] = true
	}
	var errs []string
	for n := range gone {
		if records[n] == nil {
			delete(gone, n)
			fmt.Fprintf(o.out(), "%s is not installed on %s\n", n, t.Name)
		}
	}
	for n := range records {
		if gone[n] || idx == nil || idx.Get(n) == nil {
			continue
		}
		for _, d := range idx.Get(n).DependsOn {
			if gone[d] {
				errs = append(errs, fmt.Sprintf("%s is needed by installed add-on %s (remove it too, or keep %s)", d, n, d))
			}
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("cluster %s: refusing to remove: %s", t.Name, strings.Join(errs, "; "))
	}
	order := removalOrder(gone, idx)
	p := &Plan{Cluster: t.Name, Type: t.Type, Version: t.Version}
	for _, n := range order {
		s := Step{Name: n, Action: Remove, From: records[n].Version, Record: records[n], Reason: "requested"}
		if idx != nil {
			s.Addon = idx.Get(n)
		}
		p.Steps = append(p.Steps, s)
	}
	if len(p.Steps) == 0 {
		fmt.Fprintf(o.out(), "cluster %s: nothing to remove\n", t.Name)
		return nil
	}
	return Execute(ctx, t, p, o)
}

// removalOrder lists names dependents first (reverse dependency order), by name otherwise.
func removalOrder(names map[string]bool, idx *Index) []string {
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	done := map[string]bool{}
	var order []string
	var visit func(n string)
	visit = func(n string) {
		if done[n] {
			return
		}
		done[n] = true
		if idx != nil && idx.Get(n) != nil {
			for _, d := range idx.Get(n).DependsOn {
				if names[d] {
					visit(d)
				}
			}
		}
		order = append(order, n)
	}
	for _, n := range sorted {
		visit(n)
	}
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	return order
}

// progress prints a line each time the reason an object is not ready changes.
type progress struct {
	w    io.Writer
	ref  string
	last string
}

func (p *progress) report(why string) {
	if why != p.last {
		fmt.Fprintf(p.w, "  … %s: %s\n", p.ref, why)
		p.last = why
	}
}
