package testverbs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/upgrade"
)

// DtestCommand is `nuv dtest`.
func DtestCommand() cli.Command {
	return cli.Command{Name: "dtest", Short: dtestUsage.Short, Run: runDtest}
}

// LeakTimeout bounds how long dtest waits for garbage collection to remove what destroy deleted.
const LeakTimeout = 60 * time.Second

func runDtest(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("dtest")
	timeout := fs.Duration("timeout", deploy.DefaultTimeout, "bound of each wait (operator Available, Whisk Ready, deletion)")
	keep := fs.Bool("keep", false, "skip destroy and the leak check (leave the deployment running)")
	from := fs.String("upgrade-from", env.Getenv(upgrade.EnvFrom), "first install the operator and instance at this git tag/commit (or operator image), upgrade to the working tree's operator and check the instance kept its UID and data ("+upgrade.EnvFrom+")")
	u := dtestUsage
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return u.Errorf("dtest: unexpected arguments %q", fs.Args())
	}
	return DeploymentTest(ctx, env, DtestOptions{Timeout: *timeout, Keep: *keep, UpgradeFrom: strings.TrimSpace(*from)})
}

// DtestOptions configure DeploymentTest.
type DtestOptions struct {
	// Kubeconfig and Type name the cluster; "" resolves it like every verb (kube.Resolve).
	Kubeconfig, Type string
	// Timeout bounds each wait; zero means deploy.DefaultTimeout.
	Timeout time.Duration
	// Keep leaves the deployment running (no destroy, no leak check).
	Keep bool
	// UpgradeFrom, when set, takes the upgrade path first: the operator and instance installed at
	// this version (a git ref of the project, or an operator image), then the operator upgraded
	// to the working tree's and the instance checked to have kept its UID and data.
	UpgradeFrom string
}

// DeploymentTest is `nuv dtest` as a function, for the commands that compose it (`nuv up`): the
// deployment test on the cluster of o, its steps reported to all-kubes when run under it.
func DeploymentTest(ctx context.Context, env *cli.Env, o DtestOptions) error {
	if o.Timeout <= 0 {
		o.Timeout = deploy.DefaultTimeout
	}
	t, err := resolveAt(ctx, env, o.Kubeconfig, o.Type)
	if err != nil {
		return fmt.Errorf("dtest: %w", err)
	}
	st := &steps{getenv: env.Getenv}
	err = dtest(ctx, env, t, o.Timeout, o.Keep, o.UpgradeFrom, st)
	if werr := st.write(); werr != nil {
		env.Log.Warnf("dtest: %v", werr)
	}
	return err
}

func (t *target) deployOptions(env *cli.Env, timeout time.Duration) deploy.Options {
	return deploy.Options{Project: t.Project, Kubeconfig: t.Kubeconfig, KubeType: t.Type, Timeout: timeout,
		Out: env.Out, Log: env.Log, Getenv: env.Getenv, Home: t.Home}
}

// Dtest runs the deployment test on t, recording each phase in st.
func Dtest(ctx context.Context, env *cli.Env, t *target, timeout time.Duration, keep bool, st *steps) error {
	return dtest(ctx, env, t, timeout, keep, "", st)
}

// dtest is Dtest, after the upgrade path from upgradeFrom when it is set (see upgradePath).
func dtest(ctx context.Context, env *cli.Env, t *target, timeout time.Duration, keep bool, upgradeFrom string, st *steps) error {
	fmt.Fprintf(env.Out, "dtest on %s (type %s)\n", t.Name, t.Type)
	dyn, err := dynamic.NewForConfig(t.Config)
	if err != nil {
		return fmt.Errorf("dtest: %w", err)
	}
	o := t.deployOptions(env, timeout)
	var before []string
	phase := func(name string, fn func() error) error {
		fmt.Fprintf(env.Out, "--- dtest %s\n", name)
		if err := st.run(name, fn); err != nil {
			fmt.Fprintf(env.Out, "--- FAIL dtest %s: %v\n", name, err)
			return fmt.Errorf("dtest %s: %w", name, err)
		}
		return nil
	}
	if err := phase("inventory", func() (err error) {
		before, err = inventory(ctx, dyn)
		if err == nil && len(before) > 0 {
			fmt.Fprintf(env.Out, "note: %d objects of the operator exist before the test: %s\n", len(before), summarize(before, 5))
		}
		return err
	}); err != nil {
		return err
	}
	deployed := false
	defer func() {
		// A failure after deploying still tears down, so the cluster is left as found.
		if deployed && !keep {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
			defer cancel()
			if err := teardown(dctx, env, o, dyn); err != nil {
				fmt.Fprintf(env.Out, "warning: teardown after the failure: %v\n", err)
			}
		}
	}()
	touch(env.Getenv, operatorObjects...)
	if upgradeFrom != "" {
		deployed = true
		st.res.Upgrade = &report.Upgrade{}
		if err := upgradePath(ctx, env, t, o, dyn, upgradeFrom, phase, st.res.Upgrade); err != nil {
			return err
		}
	}
	if err := phase("operator", func() error { deployed = true; return deploy.Operator(ctx, o) }); err != nil {
		return err
	}
	if err := phase("instance", func() error { return deploy.Instance(ctx, o) }); err != nil {
		return err
	}
	if err := phase("assertions", func() error { return assertInstance(ctx, env, t, dyn) }); err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(env.Out, "dtest: passed (--keep: the deployment is left running, no leak check)")
		deployed = false
		return nil
	}
	if err := phase("destroy", func() error { return deploy.Destroy(ctx, o) }); err != nil {
		return err
	}
	deployed = false
	if err := phase("no-leaks", func() error { return noLeaks(ctx, dyn, before) }); err != nil {
		return err
	}
	fmt.Fprintln(env.Out, "dtest: passed")
	return nil
}

// noLeaks waits (bounded) until nothing is left that was not there before the test.
func noLeaks(ctx context.Context, dyn dynamic.Interface, before []string) error {
	deadline := time.Now().Add(LeakTimeout)
	for {
		after, err := inventory(ctx, dyn)
		if err != nil {
			return err
		}
		left := leaked(before, after)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d objects leaked after destroy: %s", len(left), summarize(left, 10))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted with %d objects left: %s", len(left), summarize(left, 10))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// component is what dtest expects of one enabled component of a Whisk.
type component struct {
	field, condition string
	objects          []schema.GroupVersionResource
}

var (
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	statefulsets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	services     = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

var components = []component{
	{"controller", "ControllerReady", []schema.GroupVersionResource{deployments, services}},
	{"redis", "RedisReady", []schema.GroupVersionResource{statefulsets}},
	{"couchdb", "CouchDBReady", []schema.GroupVersionResource{statefulsets}},
	{"static", "StaticReady", []schema.GroupVersionResource{deployments, services}},
}

// instanceWhisks renders the instance file the run applies (WHISK, default kube.DefaultInstance,
// for the target's cluster type) and returns its path and its Whisks, each with its namespace
// set ("default" where the file leaves it out).
func instanceWhisks(env *cli.Env, t *target) (string, []*unstructured.Unstructured, error) {
	name := env.Getenv("WHISK")
	if name == "" {
		name = kube.DefaultInstance
	}
	file, err := kube.InstanceFile(t.Project, t.Type, name)
	if err != nil {
		return "", nil, err
	}
	data, err := kube.RenderInstance(file, env.Getenv)
	if err != nil {
		return "", nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.GetKind() != "Whisk" {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		out = append(out, u)
	}
	return file, out, nil
}

// assertInstance checks every Whisk of the instance file: Ready, and for each enabled component its
// condition True and its objects (<whisk>-<component>) present.
func assertInstance(ctx context.Context, env *cli.Env, t *target, dyn dynamic.Interface) error {
	file, items, err := instanceWhisks(env, t)
	if err != nil {
		return err
	}
	var problems []string
	checked := 0
	for _, u := range items {
		ns := u.GetNamespace()
		touch(env.Getenv, report.TouchedObject{APIVersion: u.GetAPIVersion(), Kind: "Whisk", Namespace: ns, Name: u.GetName()})
		for _, c := range components {
			for _, gvr := range c.objects {
				kind := map[string]string{"deployments": "Deployment", "statefulsets": "StatefulSet", "services": "Service"}[gvr.Resource]
				touch(env.Getenv, report.TouchedObject{APIVersion: gvr.GroupVersion().String(), Kind: kind, Namespace: ns, Name: u.GetName() + "-" + c.field})
			}
		}
		live, err := dyn.Resource(whisks).Namespace(ns).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			problems = append(problems, fmt.Sprintf("Whisk %s/%s: %v", ns, u.GetName(), err))
			continue
		}
		checked++
		conds := conditions(live)
		if conds["Ready"] != "True" {
			problems = append(problems, fmt.Sprintf("Whisk %s/%s: Ready is %q", ns, u.GetName(), conds["Ready"]))
		}
		for _, c := range components {
			enabled, _, _ := unstructured.NestedBool(live.Object, "spec", c.field, "enabled")
			if !enabled {
				continue
			}
			had := len(problems)
			if conds[c.condition] != "True" {
				problems = append(problems, fmt.Sprintf("Whisk %s/%s: %s is %q", ns, u.GetName(), c.condition, conds[c.condition]))
			}
			for _, gvr := range c.objects {
				obj := u.GetName() + "-" + c.field
				if _, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, obj, metav1.GetOptions{}); err != nil {
					problems = append(problems, fmt.Sprintf("%s %s/%s: %v", gvr.Resource, ns, obj, err))
				}
			}
			if c.field == "controller" && len(problems) == had {
				// where its pods really run (not on kwok's simulated nodes), the controller's API
				// answers through its Service
				if err := controllerAnswers(ctx, t, ns, u.GetName()); err != nil {
					problems = append(problems, fmt.Sprintf("Whisk %s/%s: %v", ns, u.GetName(), err))
				}
			}
			if len(problems) == had {
				fmt.Fprintf(env.Out, "    %s/%s %s: ready\n", ns, u.GetName(), c.field)
			}
		}
	}
	if checked == 0 && len(problems) == 0 {
		return fmt.Errorf("no Whisk found in %s", file)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func conditions(u *unstructured.Unstructured) map[string]string {
	m := map[string]string{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		if cm, ok := c.(map[string]any); ok {
			t, _ := cm["type"].(string)
			s, _ := cm["status"].(string)
			m[t] = s
		}
	}
	return m
}

var dtestUsage = cli.Usage{
	Short: "deployment test: operator, instance, assertions, destroy, nothing leaked",
	Line:  "nuv dtest [--timeout D] [--keep] [--upgrade-from REF]",
	Long: "Deploys the operator and the instance on the selected cluster, checks every enabled component,\ndestroys both and checks that nothing labelled as the operator's is left.\n\n" +
		"With --upgrade-from REF (a git tag or commit of the project, or an operator image) it first\n" +
		"installs the operator at REF and the instance, writes an action to the instance's controller,\n" +
		"upgrades to the working tree's operator (built and loaded as build-and-load does) and checks\n" +
		"that the instance kept its UID and the action (phases install-from, seed, upgrade, converged).",
	Examples: "nuv dtest\nnuv dtest --keep --timeout 5m\nnuv dtest --upgrade-from v1.2.0\nnuv all-kubes -- dtest\nnuv all-kubes --upgrade-from v1.2.0 -- dtest",
}

// controllerAnswers checks nuv's whisk-controller of Whisk whisk through the API server's service
// proxy: /ping answers pong and /ready 200 (its CouchDB and Redis answer). Where its pods run on
// simulated nodes (a local cluster's kwok nodes: nothing runs), there is nothing to ask.
func controllerAnswers(ctx context.Context, t *target, ns, whisk string) error {
	cs, err := kubernetes.NewForConfig(t.Config)
	if err != nil {
		return err
	}
	svc := whisk + "-controller"
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + whisk + ",app.kubernetes.io/component=controller"})
	if err != nil {
		return fmt.Errorf("controller pods of %s/%s: %w", ns, whisk, err)
	}
	real := false
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == "" {
			continue
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("node %s of controller pod %s/%s: %w", pod.Spec.NodeName, ns, pod.Name, err)
		}
		real = real || !kube.Simulated(node)
	}
	if !real {
		return nil
	}
	services := cs.CoreV1().Services(ns)
	pong, err := services.ProxyGet("http", svc, "8080", "/ping", nil).DoRaw(ctx)
	if err != nil || string(pong) != "pong" {
		return fmt.Errorf("controller API %s/%s: GET /ping = %q, %v", ns, svc, pong, err)
	}
	ready, err := services.ProxyGet("http", svc, "8080", "/ready", nil).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("controller API %s/%s: GET /ready = %s, %v", ns, svc, ready, err)
	}
	return nil
}
