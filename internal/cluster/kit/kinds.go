package kit

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Kind is what a provider does with one kind of resource, in one place: carry out a plan's changes
// to it and, for a provider that writes Terraform, render it. X is the provider's executor of one
// change (its clients, the spec, the resource being made); T its Terraform writer.
type Kind[X, T any] struct {
	// Apply creates the resource or updates it in place (the change says which: ch.Actual is nil
	// for a create). A kind whose Replace is false never sees a replace.
	Apply func(x X, ctx context.Context, ch cluster.Change) error
	// Delete removes the resource (ch.Actual) and waits until it is gone; one already gone is done.
	Delete func(x X, ctx context.Context, ch cluster.Change) error
	// Replace says Apply can carry out a replace (a node group made anew under a running
	// cluster); Recreate that a replace is Delete then Apply (which sees the replace). For other
	// kinds the provider refuses a replace (Kinds.Refuse).
	Replace, Recreate bool
	// Terraform renders the resource into the module being written; nil: the kind has no
	// Terraform form and is left out (a kubeconfig, written by nuv).
	Terraform func(w T, r cluster.Resource) error
}

// Kinds is a provider's table of resource kinds: Execute and Terraform dispatch each change and
// each resource to the handler of its kind.
type Kinds[X, T any] struct {
	// Provider names the provider in errors.
	Provider string
	// ByKind holds the handler of each kind, by the kind in resource keys ("vpc", "nodegroup").
	ByKind map[string]Kind[X, T]
	// Refuse is the error of a replace of a kind that cannot be replaced; nil: a plain error.
	Refuse func(x X, ch cluster.Change) error
	// Stranger is the error of deleting a resource of a kind the provider does not make (one that
	// carries the provider's tag); nil: a plain error.
	Stranger func(x X, ch cluster.Change) error
}

// Execute carries out change ch with the handler of its kind.
func (ks Kinds[X, T]) Execute(ctx context.Context, x X, ch cluster.Change) error {
	kind := cluster.KindOf(ch.Key)
	h, ok := ks.ByKind[kind]
	switch {
	case ch.Action == cluster.Delete && (!ok || h.Delete == nil):
		if ks.Stranger != nil {
			return ks.Stranger(x, ch)
		}
		return fmt.Errorf("%s provider: cannot delete %s: nuv does not make %q resources", ks.Provider, ch.Key, kind)
	case ch.Action == cluster.Delete:
		return h.Delete(x, ctx, ch)
	case !ok || h.Apply == nil:
		return fmt.Errorf("%s provider: cannot %s %s", ks.Provider, ch.Action, ch.Key)
	case ch.Action == cluster.Replace && h.Recreate:
		if err := h.Delete(x, ctx, ch); err != nil {
			return err
		}
	case ch.Action == cluster.Replace && !h.Replace:
		if ks.Refuse != nil {
			return ks.Refuse(x, ch)
		}
		return fmt.Errorf("%s provider: %s cannot be replaced", ks.Provider, ch.Key)
	}
	return h.Apply(x, ctx, ch)
}

// Refuses says whether a change is a replace its kind's handler cannot carry out (so a provider
// can refuse it before it opens a session or resolves anything).
func (ks Kinds[X, T]) Refuses(ch cluster.Change) bool {
	h, ok := ks.ByKind[cluster.KindOf(ch.Key)]
	return ch.Action == cluster.Replace && ok && !h.Replace && !h.Recreate
}

// Terraform renders resource r with the handler of its kind; a kind without a Terraform form is
// left out, an unknown kind is an error.
func (ks Kinds[X, T]) Terraform(w T, r cluster.Resource) error {
	h, ok := ks.ByKind[r.Kind]
	if !ok {
		return fmt.Errorf("terraform: no Terraform form for %s", r.Key())
	}
	if h.Terraform == nil {
		return nil
	}
	return h.Terraform(w, r)
}

// Observed is the resource key as observe (a provider's Observe) now sees it: what a provider
// returns after it made or changed the resource. A resource not there is an error.
func Observed(ctx context.Context, observe func(context.Context, *spec.Cluster, []cluster.Resource) ([]cluster.Resource, error), c *spec.Cluster, key string, recorded ...cluster.Resource) (*cluster.Resource, error) {
	rs, err := observe(ctx, c, recorded)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.Key() == key {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("%s is not there after it was made", key)
}
