package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nuv-dev/nuv/internal/image/login"
	"github.com/nuv-dev/nuv/internal/kube"
)

// imageCheckTimeout bounds the registry question of checkDefaultImage.
const imageCheckTimeout = 10 * time.Second

// imageFix names the commands that give a cluster an operator image.
const imageFix = "build it and load it into the cluster with `task build-and-load` (nuv image load), " +
	"or push it with `task build-and-push` and set MY_OPERATOR_IMAGE (and TAG) to the pushed reference"

// imageVerdict is what checkImage found.
type imageVerdict struct {
	onNodes  bool  // a node reports the image among its images (loaded, or pulled before)
	pullable bool  // the registry serves its manifest to nuv
	missing  error // the registry answered that it does not have it or refused nuv (definitive)
	unknown  error // the registry could not be asked (network): nothing definitive
}

// checkDefaultImage runs before the operator is applied with the kustomization's default image on
// a cluster whose nodes pull images (a local cluster runs the operator on the host instead). An
// image no node holds and its registry definitively does not serve ends here with the commands that
// fix it, instead of an ImagePullBackOff after the wait. A registry nuv cannot reach is definitive
// for kind (its nodes share this machine's network) and only a warning for other clusters, which
// may reach registries this machine cannot. A dry run only warns.
// nodes lists the cluster's nodes as the image check needs them (nil when they cannot be read:
// the registry is asked then).
func (t *target) nodes(ctx context.Context) []corev1.Node {
	list, err := t.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	return list.Items
}

func checkDefaultImage(ctx context.Context, o Options, t *target, img imageChoice, nodes func(context.Context) []corev1.Node) error {
	if img.Source != "default" || t.localName != "" {
		return nil
	}
	kc, err := login.NewKeychain(o.Getenv)
	if err != nil {
		kc = authn.DefaultKeychain
	}
	v := checkImage(ctx, nodes(ctx), img.Ref, kc, nil)
	var problem error
	switch {
	case v.onNodes || v.pullable:
		return nil
	case v.missing != nil:
		problem = fmt.Errorf("the operator image %s (the kustomization's default: nothing was built, loaded or pushed for cluster %s) is on none of its nodes and its registry does not serve it (%v); %s",
			img.Ref, t.name, v.missing, imageFix)
	case t.kubeType == kube.TypeKind:
		problem = fmt.Errorf("the operator image %s (the kustomization's default: nothing was built, loaded or pushed for kind cluster %s) is on none of its nodes and its registry cannot be reached (%v); %s",
			img.Ref, t.name, v.unknown, imageFix)
	default:
		o.Log.Warnf("could not check that cluster %s can pull the default operator image %s (%v); if the operator does not become Available: %s",
			t.name, img.Ref, v.unknown, imageFix)
		return nil
	}
	if o.DryRun {
		o.Log.Warnf("%v", problem)
		return nil
	}
	return problem
}

// checkImage asks whether one of the cluster's nodes holds ref, then (if none) whether its registry
// serves it. rt is the registry transport (nil: the default).
func checkImage(ctx context.Context, nodes []corev1.Node, ref string, kc authn.Keychain, rt http.RoundTripper) imageVerdict {
	var v imageVerdict
	if v.onNodes = nodesHold(nodes, ref); v.onNodes {
		return v
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		v.missing = fmt.Errorf("not a valid image reference: %w", err)
		return v
	}
	cctx, cancel := context.WithTimeout(ctx, imageCheckTimeout)
	defer cancel()
	opts := []remote.Option{remote.WithContext(cctx), remote.WithAuthFromKeychain(kc)}
	if rt != nil {
		opts = append(opts, remote.WithTransport(rt))
	}
	_, err = remote.Head(r, opts...)
	var te *transport.Error
	switch {
	case err == nil:
		v.pullable = true
	case errors.As(err, &te) && te.StatusCode != 0 && te.StatusCode < 500:
		v.missing = fmt.Errorf("%s answered %d %s", r.Context().RegistryStr(), te.StatusCode, http.StatusText(te.StatusCode))
	default:
		v.unknown = err
	}
	return v
}

// nodesHold tells whether a node reports ref among its images (status.images names, which the
// kubelet lists fully qualified, e.g. docker.io/library/x:tag).
func nodesHold(nodes []corev1.Node, ref string) bool {
	want := map[string]bool{ref: true}
	if r, err := name.ParseReference(ref); err == nil {
		want[r.Name()] = true // fully qualified form
	}
	for _, n := range nodes {
		for _, im := range n.Status.Images {
			for _, nm := range im.Names {
				if want[nm] || want[strings.TrimPrefix(nm, "docker.io/library/")] {
					return true
				}
			}
		}
	}
	return false
}
