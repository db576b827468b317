package deploy

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/kubeclient"
	"github.com/nuv-dev/nuv/internal/secrets"
)

// target is the cluster a verb acts on, with its clients.
type target struct {
	kubeconfig string
	name       string // cluster name (the kubeconfig's file name in clusters/)
	origin     string // where the cluster came from (kube.Target.Origin)
	kubeType   string
	cfg        *rest.Config
	cs         kubernetes.Interface
	dyn        dynamic.Interface
	mapper     *restmapper.DeferredDiscoveryRESTMapper
	// localName is the nuv local cluster name (node label nuv.dev/cluster) when the cluster's
	// pods are simulated; "" on clusters that run containers.
	localName string
	// masker hides secret values (process environment, the project's .env) in what a dry run prints.
	masker *secrets.Masker
}

// connect resolves the cluster of o (kube.Resolve: --kubeconfig, NUV_CLUSTER, the project's
// selection, KUBECONFIG; the type from o.KubeType, else KUBE, an override or detection) and builds
// clients.
func connect(ctx context.Context, o Options) (*target, error) {
	r, err := kube.Resolve(o.Project, o.Kubeconfig, o.Getenv)
	if err != nil {
		return nil, err
	}
	t := &target{kubeconfig: r.Kubeconfig, name: r.Name, origin: r.Origin(), kubeType: o.KubeType}
	if t.masker, err = projectMasker(o.Project); err != nil {
		return nil, err
	}
	if t.kubeType == "" {
		t.kubeType = r.Type
	}
	cfg, err := kube.RESTConfig(t.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", t.name, err)
	}
	t.cfg = cfg
	if t.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", t.name, err)
	}
	if t.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", t.name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", t.name, err)
	}
	t.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	if t.kubeType == "" {
		if err := r.Detect(ctx, cfg); err != nil {
			return nil, err
		}
		t.kubeType = r.Type
	}
	t.localName, err = kubeclient.LocalClusterName(ctx, t.cs)
	if err != nil {
		return nil, fmt.Errorf("cluster %s (%s): %w", t.name, t.kubeconfig, err)
	}
	if t.localName == "" && t.kubeType == kube.TypeLocal {
		t.localName = t.name
	}
	return t, nil
}

// projectMasker masks the secret-looking variables of the process environment and of the
// project's .env (which instance files are rendered with).
func projectMasker(project string) (*secrets.Masker, error) {
	dot, err := dotenv.Dir(project)
	if err != nil {
		return nil, err
	}
	return secrets.NewMasker(append(os.Environ(), dot...)), nil
}
