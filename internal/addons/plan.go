package addons

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Action is what a plan does with one add-on.
type Action string

// The actions of a plan.
const (
	Install   Action = "install"
	Upgrade   Action = "upgrade"
	Unchanged Action = "unchanged"
	Remove    Action = "remove"
	Skipped   Action = "skipped"
)

// Step is the plan for one add-on.
type Step struct {
	Name   string
	Action Action
	// From is the installed version (upgrade, unchanged, remove); To the index's (install, upgrade, unchanged).
	From, To string
	// Reason explains a skip, a remove, or an upgrade without a version change.
	Reason string
	// Addon is the index entry (nil for an add-on removed from the index).
	Addon *Addon
	// Rendered holds the desired objects (install, upgrade, unchanged).
	Rendered *Rendered
	// Record is what the cluster has installed (nil for an install).
	Record *Record
}

// Plan is what Apply would do on one cluster, in execution order.
type Plan struct {
	Cluster, Type, Version string
	Steps                  []Step
}

// Options select and tune a plan, an apply or a remove.
type Options struct {
	// Only names add-ons to act on (their dependencies come along); Stacks names stacks. Neither: the
	// root index file's add-ons, and the removal of installed add-ons the index no longer defines.
	Only   []string
	Stacks []string
	// Fetcher gets remote sources (nil: no cache).
	Fetcher *Fetcher
	// Timeout bounds the readiness wait of each add-on (default 5 minutes).
	Timeout time.Duration
	// Out receives progress (nil: discarded).
	Out io.Writer
}

func (o Options) out() io.Writer {
	if o.Out == nil {
		return io.Discard
	}
	return o.Out
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 5 * time.Minute
	}
	return o.Timeout
}

// Changes counts the steps that change the cluster.
func (p *Plan) Changes() int {
	n := 0
	for _, s := range p.Steps {
		if s.Action == Install || s.Action == Upgrade || s.Action == Remove {
			n++
		}
	}
	return n
}

// Step returns the step of the add-on called name, or nil.
func (p *Plan) Step(name string) *Step {
	for i := range p.Steps {
		if p.Steps[i].Name == name {
			return &p.Steps[i]
		}
	}
	return nil
}

// Print writes the plan for people, one line per add-on.
func (p *Plan) Print(w io.Writer) {
	ver := p.Version
	if ver == "" {
		ver = "version unknown"
	}
	fmt.Fprintf(w, "cluster %s (%s, %s): %d add-on(s), %d change(s)\n", p.Cluster, p.Type, ver, len(p.Steps), p.Changes())
	for _, s := range p.Steps {
		var what string
		switch s.Action {
		case Install:
			what = s.To
		case Upgrade:
			what = s.From + " -> " + s.To
		case Unchanged:
			what = s.To
		case Remove:
			what = s.From
		case Skipped:
			what = s.To
		}
		line := fmt.Sprintf("  %-10s %-20s %s", s.Action, s.Name, what)
		if s.Reason != "" {
			line += " (" + s.Reason + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// MakePlan compares the index with what the cluster has installed. It fetches and renders every
// selected add-on that the cluster's type, nodes and version admit, so a bad digest, a broken
// chart or two add-ons owning the same object are refused here, before anything is applied.
func MakePlan(ctx context.Context, t *Target, idx *Index, o Options) (*Plan, error) {
	sel, err := idx.Select(o.Only, o.Stacks)
	if err != nil {
		return nil, err
	}
	records, err := t.Records(ctx)
	if err != nil {
		return nil, err
	}
	f := o.Fetcher
	if f == nil {
		f = &Fetcher{}
	}
	p := &Plan{Cluster: t.Name, Type: t.Type, Version: t.Version}
	skipped := map[string]bool{}
	for _, a := range sel {
		rec := records[a.Name]
		s := Step{Name: a.Name, Addon: a, To: a.Version, Record: rec}
		if rec != nil {
			s.From = rec.Version
		}
		reason, err := t.admits(ctx, a)
		if err != nil {
			return nil, err
		}
		for _, d := range a.DependsOn {
			if reason == "" && skipped[d] {
				reason = fmt.Sprintf("depends on %s, which is skipped", d)
			}
		}
		if reason != "" {
			skipped[a.Name] = true
			s.Action, s.Reason = Skipped, reason
			if rec != nil {
				s.Action, s.Reason = Remove, "installed, but now skipped: "+reason
			}
			p.Steps = append(p.Steps, s)
			continue
		}
		r, err := f.render(ctx, a, t.Version)
		if err != nil {
			return nil, err
		}
		s.Rendered = r
		p.Steps = append(p.Steps, s)
	}
	if err := t.prepareObjects(p); err != nil {
		return nil, err
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Rendered == nil {
			continue
		}
		switch {
		case s.Record == nil:
			s.Action = Install
		case s.Record.Version != s.To:
			s.Action = Upgrade
		case s.Record.Hash != s.Rendered.Hash:
			s.Action, s.Reason = Upgrade, "same version, manifests changed"
		default:
			s.Action = Unchanged
			n, err := t.missing(ctx, s.Record)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				s.Action, s.Reason = Upgrade, fmt.Sprintf("same version, %d object(s) missing from the cluster", n)
			}
		}
	}
	if len(o.Only) == 0 && len(o.Stacks) == 0 {
		var gone []string
		for n := range records {
			if idx.Get(n) == nil {
				gone = append(gone, n)
			}
		}
		sort.Strings(gone)
		for _, n := range gone {
			p.Steps = append(p.Steps, Step{Name: n, Action: Remove, From: records[n].Version, Record: records[n], Reason: "no longer in the index"})
		}
	}
	if err := checkOwnership(p, records); err != nil {
		return nil, err
	}
	return p, nil
}

// missing counts the objects of an installed add-on's inventory that no longer exist (deleted by
// hand, or by something else): an unchanged add-on with missing objects is applied again. The
// objects are read concurrently, so a remote cluster's round trips do not add up.
func (t *Target) missing(ctx context.Context, rec *Record) (int, error) {
	var n atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, r := range rec.Inventory {
		g.Go(func() error {
			u, err := t.get(gctx, r)
			if err != nil {
				return fmt.Errorf("add-on %s: %s: %w", rec.Name, r, err)
			}
			if u == nil {
				n.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return int(n.Load()), nil
}

// admits returns why the cluster does not take add-on a ("" when it does).
func (t *Target) admits(ctx context.Context, a *Addon) (string, error) {
	if len(a.Selector.Types) > 0 {
		ok := false
		for _, ty := range a.Selector.Types {
			ok = ok || ty == t.Type
		}
		if !ok {
			return fmt.Sprintf("selector: cluster type %s is not one of %s", t.Type, strings.Join(a.Selector.Types, ", ")), nil
		}
	}
	if len(a.Selector.NodeLabels) > 0 {
		nodes, err := t.Nodes(ctx)
		if err != nil {
			return "", err
		}
		ok := false
		for _, n := range nodes {
			all := true
			for k, v := range a.Selector.NodeLabels {
				all = all && n.Labels[k] == v
			}
			ok = ok || all
		}
		if !ok {
			var kv []string
			for k, v := range a.Selector.NodeLabels {
				kv = append(kv, k+"="+v)
			}
			sort.Strings(kv)
			return fmt.Sprintf("selector: no node carries %s", strings.Join(kv, ", ")), nil
		}
	}
	if a.kubeRange != nil {
		v, err := semver.NewVersion(t.Version)
		if err != nil {
			return fmt.Sprintf("kubernetesVersion %s: the server's version %q is not a version", a.KubernetesVersion, t.Version), nil
		}
		core, _ := semver.NewVersion(fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()))
		if !a.kubeRange.Check(core) {
			return fmt.Sprintf("kubernetesVersion: server %s is outside %s", t.Version, a.KubernetesVersion), nil
		}
	}
	return "", nil
}

// prepareObjects gives namespaced objects without a namespace the add-on's (or "default"), labels
// every object with its add-on and ApplySet, and hashes the result. Whether a kind is namespaced
// comes from the cluster, or from a CRD one of the planned add-ons installs.
func (t *Target) prepareObjects(p *Plan) error {
	crdScope := map[schema.GroupKind]bool{} // namespaced?
	for _, s := range p.Steps {
		if s.Rendered == nil {
			continue
		}
		for _, o := range s.Rendered.Objects {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			k, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			sc, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
			crdScope[schema.GroupKind{Group: g, Kind: k}] = sc == "Namespaced"
		}
	}
	for _, s := range p.Steps {
		r := s.Rendered
		if r == nil {
			continue
		}
		ns := s.Addon.Namespace
		if ns == "" {
			ns = "default"
		}
		for _, o := range r.Objects {
			gvk := o.GroupVersionKind()
			namespaced, known := crdScope[gvk.GroupKind()]
			if !known {
				m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if meta.IsNoMatchError(err) {
					t.mapper.Reset()
					m, err = t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				}
				if err != nil {
					return fmt.Errorf("add-on %s (%s): %s %s: the cluster does not serve %s and no planned add-on installs its CRD: %w",
						s.Name, s.Addon.at(), gvk.Kind, o.GetName(), gvk.GroupVersion().WithKind(gvk.Kind), err)
				}
				namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
			}
			if namespaced && o.GetNamespace() == "" {
				o.SetNamespace(ns)
			}
			if !namespaced {
				o.SetNamespace("")
			}
			l := o.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			l[LabelAddon] = s.Name
			l[labelPartOf] = applySetID(s.Name)
			o.SetLabels(l)
		}
		sortForApply(r.Objects)
		r.Hash = hashObjects(ns, r.Objects)
	}
	return nil
}

// OwnershipError is two add-ons owning the same object.
type OwnershipError struct {
	Object string
	A, B   string
}

func (e *OwnershipError) Error() string {
	return fmt.Sprintf("add-ons %s and %s both own %s; an object belongs to one add-on", e.A, e.B, e.Object)
}

// checkOwnership refuses a plan in which two add-ons (planned, or installed and kept) own the
// same object.
func checkOwnership(p *Plan, records map[string]*Record) error {
	owner := map[string]string{}
	planned := map[string]bool{}
	claim := func(addon string, r ObjRef) error {
		k := r.Key()
		if prev, ok := owner[k]; ok && prev != addon {
			a, b := prev, addon
			if b < a {
				a, b = b, a
			}
			return &OwnershipError{Object: r.String(), A: a, B: b}
		}
		owner[k] = addon
		return nil
	}
	for _, s := range p.Steps {
		if s.Rendered == nil {
			continue
		}
		planned[s.Name] = true
		for _, o := range s.Rendered.Objects {
			if err := claim(s.Name, refOf(o)); err != nil {
				return err
			}
		}
	}
	var names []string
	for n := range records {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if planned[n] || p.Step(n) != nil {
			continue // replaced by its new objects, or being removed
		}
		for _, r := range records[n].Inventory {
			if err := claim(n, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// kindOrder is the order objects are applied in (and deleted in reverse): what others need first.
var kindOrder = []string{
	"Namespace", "ResourceQuota", "LimitRange", "PriorityClass", "CustomResourceDefinition",
	"ServiceAccount", "Secret", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "DaemonSet", "Pod",
	"ReplicaSet", "Deployment", "StatefulSet", "Job", "CronJob", "Ingress", "APIService",
	"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
}

func kindRank(kind string) int {
	for i, k := range kindOrder {
		if k == kind {
			return i
		}
	}
	return len(kindOrder)
}

// sortForApply orders objects by kindOrder, keeping the source's order within a kind.
func sortForApply(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool { return kindRank(objs[i].GetKind()) < kindRank(objs[j].GetKind()) })
}
