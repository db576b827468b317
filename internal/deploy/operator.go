package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/paths"
)

// prepare fills defaults and connects to the cluster.
func prepare(ctx context.Context, o *Options) (*target, error) {
	*o = o.withDefaults()
	if o.Project == "" {
		return nil, fmt.Errorf("deploy: no project directory")
	}
	if o.Home == "" {
		h, err := paths.Home(o.Getenv)
		if err != nil {
			return nil, err
		}
		o.Home = h
	}
	return connect(ctx, *o)
}

// operatorObjects builds the operator's manifests with the chosen image.
func operatorObjects(o Options, t *target, announce bool) ([]*unstructured.Unstructured, error) {
	cfgDir := filepath.Join(operatorDir(o), "config")
	img, err := chooseImage(o, cfgDir, t.name)
	if err != nil {
		return nil, err
	}
	if announce {
		if img.Source == "default" {
			fmt.Fprintf(o.Out, "operator image: %s (default; set MY_OPERATOR_IMAGE and TAG, or run build-and-load, to deploy your own)\n", img.Ref)
		} else {
			fmt.Fprintf(o.Out, "operator image: %s (from %s)\n", img.Ref, img.Source)
		}
	}
	objs, err := buildOperator(cfgDir, img)
	if err != nil {
		return nil, err
	}
	rememberRender(o, cfgDir, t.name, objs)
	return objs, nil
}

// rememberRender records the Deployments of the render of cfgDir for cluster (package
// rendercache), so the slim front can answer `nuv status` without kustomize. A cache: a failure
// to write it only costs the next `nuv status` its hand-over to the full program.
func rememberRender(o Options, cfgDir, cluster string, objs []*unstructured.Unstructured) {
	o = o.withDefaults()
	key, err := rendercache.Key(cfgDir, o.Project, cluster, o.Getenv)
	if err != nil {
		o.Log.V(1).Infof("operator render record: %v", err)
		return
	}
	var deps []rendercache.Object
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			deps = append(deps, rendercache.Object{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()})
		}
	}
	if err := rendercache.Save(rendercache.Dir(o.Getenv), key, deps); err != nil {
		o.Log.V(1).Infof("%v", err)
	}
}

// Operator builds the operator's kustomization, applies it server side and waits until the operator
// Deployment is Available. On a local cluster it also (re)starts the host-run operator process.
func Operator(ctx context.Context, o Options) error {
	start := time.Now()
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	img, err := chooseImage(o, filepath.Join(operatorDir(o), "config"), t.name)
	if err != nil {
		return err
	}
	if err := checkDefaultImage(ctx, o, t, img, t.nodes); err != nil {
		return err
	}
	objs, err := operatorObjects(o, t, true)
	if err != nil {
		return err
	}
	verb := "applying"
	if o.DryRun {
		verb = "server-side dry run of"
	}
	fmt.Fprintf(o.Out, "%s %d operator objects on cluster %s (%s)\n", verb, len(objs), t.name, t.kubeType)
	var deploy *unstructured.Unstructured
	n := map[change]int{}
	for _, obj := range objs {
		ch, err := t.apply(ctx, obj, o.DryRun, o.Out)
		if err != nil {
			return err
		}
		n[ch]++
		if !o.DryRun && ch != unchanged {
			fmt.Fprintf(o.Out, "  %s %s\n", objRef(obj), ch)
		}
		if obj.GetKind() == "CustomResourceDefinition" && !o.DryRun {
			if err := t.waitFor(ctx, obj, o.Timeout, o.Out, crdEstablished); err != nil {
				return err
			}
		}
		if obj.GetKind() == "Deployment" && deploy == nil {
			deploy = obj
		}
	}
	fmt.Fprintf(o.Out, "%d created, %d configured, %d unchanged\n", n[created], n[changed], n[unchanged])
	if o.DryRun {
		fmt.Fprintln(o.Out, "dry run: nothing was changed")
		return nil
	}
	if deploy != nil {
		if err := t.waitFor(ctx, deploy, o.Timeout, o.Out, deploymentAvailable); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "%s Available\n", objRef(deploy))
	}
	if t.localName != "" {
		if err := ensureHostOperator(ctx, o, t, objs); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Out, "operator ready on %s in %.1fs\n", t.name, time.Since(start).Seconds())
	return nil
}

// ensureHostOperator runs the operator binary on the host for a local cluster (whose pods run no
// containers), authenticated as the operator's ServiceAccount. A process already running the
// current binary is kept, so a second `nuv operator` changes nothing.
func ensureHostOperator(ctx context.Context, o Options, t *target, objs []*unstructured.Unstructured) error {
	h := newHostRun(o.Home, t.localName)
	if _, err := os.Stat(h.stateDir); err != nil {
		return fmt.Errorf("cluster %s is a nuv local cluster but its state is not under %s nor under its emulator (set NUV_HOME to the home it was created with): %w", t.localName, o.Home, err)
	}
	bin, err := buildBinary(ctx, o)
	if err != nil {
		return err
	}
	if pid, running, ok := h.running(); ok {
		// Keep it while it runs the current binary and its token is far from expiring.
		if st, kerr := os.Stat(h.kubeconfig()); running == bin && kerr == nil && time.Since(st.ModTime()) < tokenLifetime/2 {
			fmt.Fprintf(o.Out, "operator running on the host (pid %d, log %s)\n", pid, h.logFile())
			return nil
		}
		fmt.Fprintf(o.Out, "restarting the host operator (pid %d) with the current sources and a fresh token\n", pid)
		h.stop(5 * time.Second)
	}
	ns, sa, err := serviceAccountOf(objs)
	if err != nil {
		return err
	}
	if err := h.writeKubeconfig(ctx, t, ns, sa); err != nil {
		return err
	}
	pid, err := h.start(ctx, bin)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "operator running on the host as system:serviceaccount:%s:%s (pid %d, log %s)\n", ns, sa, pid, h.logFile())
	return nil
}

// crdEstablished is the check of a CustomResourceDefinition: Established true.
func crdEstablished(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return false, "not found"
	}
	c := kobj.FindCondition(obj, "Established")
	if c != nil && c.Status == "True" {
		return true, ""
	}
	return false, "not established yet" + c.Suffix()
}
