package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/kube"
)

// testProject makes a project directory that links the repository's operator sources, module
// files and instance files, so the host-run operator is built from this checkout.
func testProject(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "operator", "tests"} {
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type env struct {
	t    *testing.T
	c    *localtest.Cluster
	vars map[string]string
	out  bytes.Buffer
	dyn  dynamic.Interface
	cs   kubernetes.Interface
}

func (e *env) opts() Options {
	e.out.Reset()
	return Options{Project: e.c.Project, Kubeconfig: e.c.Kubeconfig, Home: e.c.Home, Timeout: 90 * time.Second,
		Out: &e.out, Log: localtest.Logger(e.t), Getenv: func(k string) string {
			if v, ok := e.vars[k]; ok {
				return v
			}
			return testGetenv(k)
		}}
}

func (e *env) must(name string, err error) {
	e.t.Helper()
	e.t.Logf("%s output:\n%s", name, e.out.String())
	if err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
}

func (e *env) whisk(name string) *unstructured.Unstructured {
	e.t.Helper()
	w, err := e.dyn.Resource(whiskGVR).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get whisk %s: %v", name, err)
	}
	return w
}

// eventually polls f until it returns "" or the deadline passes, then fails with its last answer.
func (e *env) eventually(what string, timeout time.Duration, f func() string) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = f(); last == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("%s: still %s after %s", what, last, timeout)
}

// resourceVersions maps every operator object to its resourceVersion.
func (e *env) resourceVersions(ctx context.Context) map[string]string {
	e.t.Helper()
	o := e.opts()
	tg, err := prepare(ctx, &o)
	if err != nil {
		e.t.Fatal(err)
	}
	objs, err := operatorObjects(o, tg, false)
	if err != nil {
		e.t.Fatal(err)
	}
	rv := map[string]string{}
	for _, obj := range objs {
		ri, _, err := tg.resource(obj)
		if err != nil {
			e.t.Fatal(err)
		}
		cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			rv[objRef(obj)] = "missing"
			continue
		}
		rv[objRef(obj)] = cur.GetResourceVersion()
	}
	return rv
}

func TestIntegrationDeployVerbs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	project := testProject(t)
	c := localtest.Start(t, localtest.Options{Project: project})
	ctx := context.Background()
	e := &env{t: t, c: c, vars: map[string]string{}}
	e.dyn = dynamic.NewForConfigOrDie(c.Config)
	e.cs = kubernetes.NewForConfigOrDie(c.Config)

	t.Run("operator", func(t *testing.T) {
		e.t = t
		start := time.Now()
		e.must("operator", Operator(ctx, e.opts()))
		t.Logf("operator Available in %.1fs", time.Since(start).Seconds())
		if !strings.Contains(e.out.String(), "operator image: ghcr.io/nuv-dev/whisk-operator:latest (default") {
			t.Error("the default image was not printed")
		}
		h := newHostRun(c.Home, c.Name)
		pid, _, ok := h.running()
		if !ok {
			t.Fatal("no host operator registered in the cluster's pids/")
		}
		st, err := os.Stat(h.kubeconfig())
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("operator kubeconfig: %v %v", st, err)
		}
		data, _ := os.ReadFile(h.kubeconfig())
		if !strings.Contains(string(data), "system:serviceaccount:nuv-system:whisk-operator") {
			t.Error("the host operator does not authenticate as the operator ServiceAccount")
		}
		if strings.Contains(e.out.String(), "token") && strings.Contains(e.out.String(), "eyJ") {
			t.Error("a token was printed")
		}
		t.Logf("host operator pid %d", pid)
	})

	t.Run("second operator changes nothing", func(t *testing.T) {
		e.t = t
		before := e.resourceVersions(ctx)
		e.must("operator", Operator(ctx, e.opts()))
		out := e.out.String()
		after := e.resourceVersions(ctx)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s: resourceVersion %s -> %s", k, v, after[k])
			}
		}
		if !strings.Contains(out, "0 created, 0 configured") || !strings.Contains(out, "operator running on the host (pid") {
			t.Errorf("second apply reported changes:\n%s", out)
		}
	})

	t.Run("instance Ready with every component", func(t *testing.T) {
		e.t = t
		start := time.Now()
		e.must("instance", Instance(ctx, e.opts()))
		t.Logf("instance Ready in %.1fs", time.Since(start).Seconds())
		w := e.whisk("whisk")
		for _, typ := range []string{"Ready", "ControllerReady", "RedisReady", "CouchDBReady", "StaticReady"} {
			if c := kobj.FindCondition(w, typ); c == nil || c.Status != "True" {
				t.Errorf("%s = %+v", typ, c)
			}
		}
		made, err := Labelled(ctx, e.opts(), InstanceSelector+",app.kubernetes.io/instance=whisk")
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(made, "\n")
		for _, want := range []string{"deployment default/whisk-controller", "deployment default/whisk-static", "statefulset default/whisk-redis",
			"statefulset default/whisk-couchdb", "job default/whisk-couchdb-init", "service default/whisk-static", "persistentvolumeclaim default/data-whisk-redis-0"} {
			if !strings.Contains(joined, want) {
				t.Errorf("%s missing; objects by label:\n%s", want, joined)
			}
		}
	})

	t.Run("status", func(t *testing.T) {
		e.t = t
		e.must("status", Status(ctx, e.opts()))
		for _, want := range []string{"operator: deployment nuv-system/whisk-operator Available", "host:     operator pid",
			"whisk:    default/whisk Ready=True (Ready)", "RedisReady       True"} {
			if !strings.Contains(e.out.String(), want) {
				t.Errorf("status lacks %q", want)
			}
		}
		// the machine form of the same status
		e.must("status -o json", StatusAs(ctx, e.opts(), &cli.OutputOption{Format: cli.FormatJSON}))
		var r StatusReport
		if err := json.Unmarshal(e.out.Bytes(), &r); err != nil || len(r.Operator) != 1 || !r.Operator[0].Available || r.Host == nil || !r.Host.Running ||
			len(r.Whisks) != 1 || r.Whisks[0].Name != "whisk" || r.Whisks[0].Ready != "True" || r.Cluster.Server == "" {
			t.Errorf("status -o json (%v): %+v\n%s", err, r, e.out.String())
		}
	})

	t.Run("dry run changes nothing", func(t *testing.T) {
		e.t = t
		before := e.resourceVersions(ctx)
		wBefore := e.whisk("whisk").GetResourceVersion()
		e.vars["MY_OPERATOR_IMAGE"], e.vars["TAG"] = "registry.example/me/op", "v2"
		o := e.opts()
		o.DryRun = true
		e.must("operator --dry-run", Operator(ctx, o))
		if !strings.Contains(e.out.String(), "~ deployment nuv-system/whisk-operator would change") || !strings.Contains(e.out.String(), "+        image: registry.example/me/op:v2") {
			t.Errorf("dry run did not show the image change:\n%s", e.out.String())
		}
		delete(e.vars, "MY_OPERATOR_IMAGE")
		delete(e.vars, "TAG")
		for name, f := range map[string]func(context.Context, Options) error{"destroy": Destroy, "clean": Clean, "instance": Instance} {
			o := e.opts()
			o.DryRun = true
			e.must(name+" --dry-run", f(ctx, o))
		}
		after := e.resourceVersions(ctx)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("dry run changed %s: %s -> %s", k, v, after[k])
			}
		}
		if e.whisk("whisk").GetResourceVersion() != wBefore {
			t.Error("dry run changed the Whisk")
		}
		if _, _, ok := newHostRun(c.Home, c.Name).running(); !ok {
			t.Error("dry run stopped the host operator")
		}
	})

	t.Run("component turned off is removed", func(t *testing.T) {
		e.t = t
		_, err := e.dyn.Resource(whiskGVR).Namespace("default").Patch(ctx, "whisk", types.MergePatchType,
			[]byte(`{"spec":{"redis":{"enabled":false}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.eventually("redis removal", 30*time.Second, func() string {
			if _, err := e.cs.AppsV1().StatefulSets("default").Get(ctx, "whisk-redis", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return "statefulset whisk-redis present"
			}
			pvcs, _ := e.cs.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=redis"})
			if len(pvcs.Items) > 0 {
				return "redis PVC present"
			}
			w := e.whisk("whisk")
			if kobj.FindCondition(w, "RedisReady") != nil {
				return "RedisReady condition kept"
			}
			if c := kobj.FindCondition(w, "Ready"); c == nil || c.Status != "True" || c.ObservedGeneration != w.GetGeneration() {
				return "Whisk not Ready"
			}
			return ""
		})
	})

	t.Run("bad instance file names file and field", func(t *testing.T) {
		e.t = t
		dir := filepath.Join(c.Project, "tests", "broken")
		_ = dir // tests/ is the repository's (a symlink): write the bad file to a private project instead
		p := t.TempDir()
		for _, f := range []string{"go.mod", "go.sum", "operator"} {
			_ = os.Symlink(filepath.Join(c.Project, f), filepath.Join(p, f))
		}
		bad := filepath.Join(p, "tests", "generic", "bad.yaml")
		_ = os.MkdirAll(filepath.Dir(bad), 0o755)
		_ = os.WriteFile(bad, []byte("apiVersion: nuv.dev/v1alpha1\nkind: Whisk\nmetadata:\n  name: bad\n  namespace: default\nspec:\n  redis:\n    enabled: true\n    storage: lots\n"), 0o644)
		o := e.opts()
		o.Project = p
		e.vars["WHISK"] = "bad"
		err := Instance(ctx, o)
		delete(e.vars, "WHISK")
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "spec.redis.storage") {
			t.Fatalf("error = %v, want the file and the field", err)
		}
	})

	t.Run("permission removed shows in status", func(t *testing.T) {
		e.t = t
		cr, err := e.cs.RbacV1().ClusterRoles().Get(ctx, "whisk-operator", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range cr.Rules {
			if len(r.APIGroups) == 1 && r.APIGroups[0] == "apps" {
				cr.Rules[i].Verbs = []string{"get", "list", "watch", "update", "patch", "delete"} // no create
			}
		}
		if _, err := e.cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		w2 := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nuv.dev/v1alpha1", "kind": "Whisk",
			"metadata": map[string]any{"name": "w2", "namespace": "default"},
			"spec":     map[string]any{"redis": map[string]any{"enabled": true}}}}
		if _, err := e.dyn.Resource(whiskGVR).Namespace("default").Create(ctx, w2, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("forbidden in status", 30*time.Second, func() string {
			c := kobj.FindCondition(e.whisk("w2"), "RedisReady")
			if c == nil || c.Reason != "ReconcileError" || !strings.Contains(c.Message, "forbidden") ||
				!strings.Contains(c.Message, "system:serviceaccount:nuv-system:whisk-operator") {
				return "no forbidden ReconcileError naming the ServiceAccount"
			}
			return ""
		})
		t.Logf("RedisReady: %s", kobj.FindCondition(e.whisk("w2"), "RedisReady").Message)
		// nuv operator puts the Role back; the operator then succeeds.
		e.must("operator", Operator(ctx, e.opts()))
		e.eventually("w2 Ready after the Role is restored", 60*time.Second, func() string {
			if c := kobj.FindCondition(e.whisk("w2"), "Ready"); c == nil || c.Status != "True" {
				return "not Ready"
			}
			return ""
		})
		if err := e.dyn.Resource(whiskGVR).Namespace("default").Delete(ctx, "w2", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("defin frees a stuck Whisk", func(t *testing.T) {
		e.t = t
		stuck := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nuv.dev/v1alpha1", "kind": "Whisk",
			"metadata": map[string]any{"name": "stuck", "namespace": "default", "finalizers": []any{"example.com/hold"}},
			"spec":     map[string]any{}}}
		if _, err := e.dyn.Resource(whiskGVR).Namespace("default").Create(ctx, stuck, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := e.dyn.Resource(whiskGVR).Namespace("default").Delete(ctx, "stuck", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if w := e.whisk("stuck"); w.GetDeletionTimestamp() == nil {
			t.Fatal("not being deleted")
		}
		e.must("defin", Defin(ctx, e.opts(), false))
		if !strings.Contains(e.out.String(), "whisk default/stuck: removed finalizers example.com/hold") {
			t.Errorf("defin did not list what it touched:\n%s", e.out.String())
		}
		e.eventually("stuck gone", 10*time.Second, func() string {
			if _, err := e.dyn.Resource(whiskGVR).Namespace("default").Get(ctx, "stuck", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return "present"
			}
			return ""
		})
	})

	t.Run("timeout names the object and its condition", func(t *testing.T) {
		e.t = t
		newHostRun(c.Home, c.Name).stop(5 * time.Second)
		_, err := e.dyn.Resource(whiskGVR).Namespace("default").Patch(ctx, "whisk", types.MergePatchType,
			[]byte(`{"spec":{"redis":{"enabled":true}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o := e.opts()
		o.Timeout = 2 * time.Second
		err = e.waitWhisk(ctx, o)
		if !IsTimeout(err) || !strings.Contains(err.Error(), "whisk default/whisk") || !strings.Contains(err.Error(), "not yet reconciled") {
			t.Fatalf("error = %v", err)
		}
		e.must("operator", Operator(ctx, e.opts())) // restarts the host operator
		e.must("instance", Instance(ctx, e.opts()))
	})

	t.Run("run from source in the foreground", func(t *testing.T) {
		e.t = t
		var runOut bytes.Buffer
		o := e.opts()
		o.Out = &runOut
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- Run(rctx, o, nil) }()
		// The host operator is stopped by run; a spec change is reconciled by the foreground one.
		e.eventually("host operator stopped by run", 60*time.Second, func() string {
			if _, _, ok := newHostRun(c.Home, c.Name).running(); ok {
				return "running"
			}
			return ""
		})
		_, err := e.dyn.Resource(whiskGVR).Namespace("default").Patch(ctx, "whisk", types.MergePatchType,
			[]byte(`{"spec":{"static":{"replicas":2}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.eventually("change reconciled by nuv run", 60*time.Second, func() string {
			w := e.whisk("whisk")
			if c := kobj.FindCondition(w, "Ready"); c == nil || c.Status != "True" || c.ObservedGeneration != w.GetGeneration() {
				return "not reconciled"
			}
			return ""
		})
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("run ended with %v", err)
		}
		t.Logf("run output:\n%s", runOut.String())
		if !strings.Contains(runOut.String(), "Starting workers") {
			t.Error("the operator's log did not reach run's output")
		}
		e.must("operator", Operator(ctx, e.opts())) // back to the host-run operator
	})

	t.Run("destroy removes everything", func(t *testing.T) {
		e.t = t
		before, err := Labelled(ctx, e.opts(), InstanceSelector)
		if err != nil || len(before) == 0 {
			t.Fatalf("before destroy: %v %v", before, err)
		}
		t.Logf("before destroy, by label:\n%s", strings.Join(before, "\n"))
		e.must("destroy", Destroy(ctx, e.opts()))
		after, err := Labelled(ctx, e.opts(), InstanceSelector)
		if err != nil || len(after) != 0 {
			t.Fatalf("after destroy, by label: %v %v", after, err)
		}
		opAfter, err := Labelled(ctx, e.opts(), OperatorSelector)
		if err != nil || len(opAfter) != 0 {
			t.Fatalf("operator objects after destroy: %v %v", opAfter, err)
		}
		for k, v := range e.resourceVersions(ctx) {
			if v != "missing" {
				t.Errorf("%s left after destroy", k)
			}
		}
		if _, _, ok := newHostRun(c.Home, c.Name).running(); ok {
			t.Error("host operator still running after destroy")
		}
	})

	t.Run("clean after a fresh deploy leaves nothing", func(t *testing.T) {
		e.t = t
		e.must("operator", Operator(ctx, e.opts()))
		e.must("instance", Instance(ctx, e.opts()))
		e.must("clean", Clean(ctx, e.opts()))
		for _, sel := range []string{InstanceSelector, OperatorSelector} {
			if left, err := Labelled(ctx, e.opts(), sel); err != nil || len(left) != 0 {
				t.Errorf("after clean, %s: %v %v", sel, left, err)
			}
		}
		for k, v := range e.resourceVersions(ctx) {
			if v != "missing" {
				t.Errorf("%s left after clean", k)
			}
		}
	})
}

// waitWhisk waits for the instance's Whisk only (no apply).
func (e *env) waitWhisk(ctx context.Context, o Options) error {
	tg, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	w := e.whisk("whisk")
	return tg.waitFor(ctx, w, o.Timeout, o.Out, whiskReady)
}

// testGetenv is the process environment without the variables that would change what the
// verbs deploy (a developer's shell may set them).
func testGetenv(k string) string {
	switch k {
	case kube.EnvCluster, kube.EnvType, "MY_OPERATOR_IMAGE", "TAG", "WHISK", "NUV_OPERATOR_DIR", "NUV_OPERATOR_MAIN":
		return ""
	}
	return os.Getenv(k)
}
