package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nuv-dev/nuv/internal/kube"
)

// instanceObjects resolves and renders the instance file for the cluster's type and WHISK.
func instanceObjects(o Options, t *target) (string, []*unstructured.Unstructured, error) {
	return instanceObjectsOf(o, t.kubeType)
}

// instanceObjectsOf resolves, renders and decodes the instance file for kubeType and WHISK.
func instanceObjectsOf(o Options, kubeType string) (string, []*unstructured.Unstructured, error) {
	name := o.Getenv("WHISK")
	if name == "" {
		name = kube.DefaultInstance
	}
	file, err := kube.InstanceFile(o.Project, kubeType, name)
	if err != nil {
		return "", nil, err
	}
	data, err := kube.RenderInstance(file, o.Getenv)
	if err != nil {
		return file, nil, err
	}
	objs, err := decodeObjects(file, data)
	return file, objs, err
}

// Instance applies the instance file chosen by cluster type and WHISK (default "whisk") and waits
// until every Whisk in it is Ready. When the cluster's type is known without asking the cluster
// (KUBE, an override, a remembered detection) a broken instance file is reported before nuv
// contacts the cluster.
func Instance(ctx context.Context, o Options) error {
	start := time.Now()
	var (
		file string
		objs []*unstructured.Unstructured
	)
	if typ := knownType(o); typ != "" {
		var err error
		if file, objs, err = instanceObjectsOf(o.withDefaults(), typ); err != nil {
			return err
		}
	}
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	if objs == nil || t.kubeType != knownType(o) {
		if file, objs, err = instanceObjects(o, t); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Out, "instance file %s on cluster %s (%s)\n", file, t.name, t.kubeType)
	for _, obj := range objs {
		ch, err := t.apply(ctx, obj, o.DryRun, o.Out)
		if err != nil {
			return fmt.Errorf("instance file %s: %w", file, err)
		}
		if !o.DryRun {
			fmt.Fprintf(o.Out, "  %s %s\n", objRef(obj), ch)
		}
	}
	if o.DryRun {
		fmt.Fprintln(o.Out, "dry run: nothing was changed")
		return nil
	}
	for _, obj := range objs {
		if obj.GetKind() != "Whisk" {
			continue
		}
		if err := t.waitFor(ctx, obj, o.Timeout, o.Out, whiskReady); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "%s Ready in %.1fs%s\n", objRef(obj), time.Since(start).Seconds(), t.componentSummary(ctx, obj))
	}
	return nil
}

// knownType is the type connect gives the cluster of o without a network call, or "".
func knownType(o Options) string {
	if o.KubeType != "" {
		return o.KubeType
	}
	if o.Project == "" {
		return ""
	}
	r, err := kube.Resolve(o.Project, o.Kubeconfig, o.withDefaults().Getenv)
	if err != nil {
		return "" // connect reports it
	}
	return r.Type
}

// componentSummary lists the component conditions of a Whisk: " (ControllerReady, RedisReady)".
func (t *target) componentSummary(ctx context.Context, obj *unstructured.Unstructured) string {
	ri, _, err := t.resource(obj)
	if err != nil {
		return ""
	}
	cur, err := ri.Get(ctx, obj.GetName(), getOpts)
	if err != nil {
		return ""
	}
	var parts []string
	conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if typ, _ := m["type"].(string); typ != "Ready" && m["status"] == "True" {
			parts = append(parts, typ)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
