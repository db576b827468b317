package kind

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/image/load"
)

// advertised reports whether the cluster has nuv's KEP-1755 ConfigMap.
func advertised(ctx context.Context, cfg *rest.Config) (bool, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	cm, err := cs.CoreV1().ConfigMaps(load.ConfigMapNamespace).Get(ctx, load.ConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s/%s: %w", load.ConfigMapNamespace, load.ConfigMapName, err)
	}
	return cm.Labels["app.kubernetes.io/managed-by"] == "nuv", nil
}

// executeRegistry starts nuv's loopback registry and advertises it in the cluster, or removes the
// advertisement.
func (p *Provider) executeRegistry(ctx context.Context, c *spec.Cluster, ch cluster.Change) (*cluster.Resource, error) {
	name := c.Metadata.Name
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := p.restConfig(rt, name)
	if err != nil {
		return nil, err
	}
	if ch.Action == cluster.Delete {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		err = cs.CoreV1().ConfigMaps(load.ConfigMapNamespace).Delete(ctx, load.ConfigMapName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete %s/%s: %w", load.ConfigMapNamespace, load.ConfigMapName, err)
		}
		return nil, nil
	}
	if p.Registry == nil {
		return nil, fmt.Errorf("this nuv cannot start the loopback registry here")
	}
	if _, err := p.Registry(ctx, cfg); err != nil {
		return nil, err
	}
	return p.observed(ctx, c, ch.Key)
}
