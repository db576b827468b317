package deploy

import (
	"context"
	"errors"
)

var errNotYet = errors.New("deploy: not implemented yet")

// Operator builds the operator's kustomization, applies it server side and waits until the operator
// Deployment is Available. On a local cluster it also (re)starts the host-run operator process.
func Operator(ctx context.Context, o Options) error { return errNotYet }

// Instance applies the instance file chosen by cluster type and WHISK (default "whisk") and waits
// until every Whisk in it is Ready.
func Instance(ctx context.Context, o Options) error { return errNotYet }

// Destroy deletes the instance, then the operator, waiting for each deletion.
func Destroy(ctx context.Context, o Options) error { return errNotYet }

// Clean deletes everything the operator and its instances created (PVCs included), by label.
func Clean(ctx context.Context, o Options) error { return errNotYet }
