package awsmachines

import (
	"context"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
)

// Day two of TestIntegrationMachinesHeal's cluster (haStacked): a roll of the control planes and
// a worker group scaled up and down.

// edited is doc with each "old=>new" edit made (each must apply).
func edited(t *testing.T, doc string, edits ...string) string {
	t.Helper()
	for _, e := range edits {
		old, repl, _ := strings.Cut(e, "=>")
		if !strings.Contains(doc, old) {
			t.Fatalf("edit %q: the spec has no %q", e, old)
		}
		doc = strings.Replace(doc, old, repl, 1)
	}
	return doc
}

// instances describes the cluster's instances that are not terminated, by resource key, through
// the SDK.
func (w *machinesWorld) instances(t *testing.T, name string) map[string]ec2types.Instance {
	t.Helper()
	out, err := w.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + awsnet.TagCluster), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ec2types.Instance{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			got[awsnet.TagsOf(in.Tags)[awsnet.TagResource]] = in
		}
	}
	return got
}

// planText is the plan of doc, printed.
func (w *machinesWorld) planText(t *testing.T, doc string) string {
	t.Helper()
	plan, err := w.eng.Plan(context.Background(), awstest.Parse(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	engine.WritePlan(&b, plan)
	return b.String()
}

// roll changes the control planes' instance type: the plan replaces them one at a time, rolling;
// apply rolls them with the API probed through the load balancer; afterwards every node is Ready,
// each control plane runs the new type at its old address, and nothing is left to do. It returns
// the rolled spec.
func (w *machinesWorld) roll(t *testing.T, doc string) string {
	ctx := context.Background()
	before := w.instances(t, "ha")
	rolled := edited(t, doc, "  aws:\n    nat: none\n=>  aws:\n    nat: none\n    controlPlane: {instanceType: m6i.xlarge}\n")
	text := w.planText(t, rolled)
	for _, want := range []string{"-/+ replace instance/control-plane-0", "rolling replacement 1 of 3 (control-plane)", "rolling replacement 3 of 3 (control-plane)",
		"instanceType: m6i.large -> m6i.xlarge  (forces replacement)", "Plan: 0 to create, 0 to update, 3 to replace, 0 to delete"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan of the roll lacks %q:\n%s", want, text)
		}
	}
	t0 := time.Now()
	if _, err := w.eng.Apply(ctx, awstest.Parse(t, rolled), engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply of the roll: %v", err)
	}
	took := time.Since(t0)
	var probes ProbeReport
	for _, r := range w.p.Rolls() {
		t.Logf("rolled %s (%s) in %.1fs; API probe: %s", r.Key, r.Role, r.Took.Seconds(), r.Probe)
		probes.Requests += r.Probe.Requests
		probes.Failed += r.Probe.Failed
		probes.LongestGap = max(probes.LongestGap, r.Probe.LongestGap)
		if r.Role != RoleControlPlane || r.Probe.Requests == 0 {
			t.Errorf("roll of %s: role %s, %d probes: want a control plane's roll, probed", r.Key, r.Role, r.Probe.Requests)
		}
	}
	if n := len(w.p.Rolls()); n != 3 {
		t.Errorf("%d machines rolled, want the 3 control planes", n)
	}
	t.Logf("roll of 3 control planes: %.1fs; API probe during the roll: %s", took.Seconds(), probes)
	// Three control planes keep the API up: a failed request is a connection the load balancer
	// sent to a machine leaving at that moment; the API never went away for long.
	if probes.LongestGap > 20*time.Second {
		t.Errorf("the API did not answer through the load balancer for %s during the roll", probes.LongestGap)
	}
	after := w.instances(t, "ha")
	for _, k := range []string{"instance/control-plane-0", "instance/control-plane-1", "instance/control-plane-2"} {
		b, a := before[k], after[k]
		if a.State == nil || a.State.Name != ec2types.InstanceStateNameRunning || a.InstanceType != "m6i.xlarge" ||
			aws.ToString(a.InstanceId) == aws.ToString(b.InstanceId) || aws.ToString(a.PrivateIpAddress) != aws.ToString(b.PrivateIpAddress) {
			t.Errorf("%s after the roll: %s %s %s at %s; before: %s %s at %s; want a new running m6i.xlarge at the same address", k,
				aws.ToString(a.InstanceId), stateOf(a), a.InstanceType, aws.ToString(a.PrivateIpAddress), aws.ToString(b.InstanceId), b.InstanceType, aws.ToString(b.PrivateIpAddress))
		}
	}
	WaitMachinesReady(t, w.p.KubeconfigPath("ha"), 4)
	if text := w.planText(t, rolled); !strings.Contains(text, "no changes") {
		t.Errorf("the plan after the roll is not empty:\n%s", text)
	}
	return rolled
}

func stateOf(in ec2types.Instance) string {
	if in.State == nil {
		return "(no state)"
	}
	return string(in.State.Name)
}

// scale grows the worker group to two machines (the new one joins) and shrinks it back: the
// machine that goes is drained first, and a pod that ran on it runs on the other worker.
func (w *machinesWorld) scale(t *testing.T, doc string, cs *kubernetes.Clientset) {
	ctx := context.Background()
	kc := w.p.KubeconfigPath("ha")
	up := edited(t, doc, "count: 1, instanceType: m6i.large=>count: 2, instanceType: m6i.large")
	text := w.planText(t, up)
	for _, want := range []string{"+ create instance/workers-1", "+ create kubeadm-join/workers-1", "+ create source-dest-check/workers-1",
		"+ create pod-route/workers-1", "Plan: 4 to create, 0 to update, 0 to replace, 0 to delete"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan of the scale-up lacks %q:\n%s", want, text)
		}
	}
	t0 := time.Now()
	if _, err := w.eng.Apply(ctx, awstest.Parse(t, up), engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply of the scale-up: %v", err)
	}
	ReadyAfterApply(t, kc, 5)
	WaitMachinesReady(t, kc, 5)
	t.Logf("scale-up: ha-workers-1 Ready in %.1fs", time.Since(t0).Seconds())
	w.checkPodNet(t, cs)

	// A pod on the machine that is to go: the other worker cordoned while it is scheduled.
	cordon := func(node string, on bool) {
		patch := []byte(`{"spec":{"unschedulable":` + map[bool]string{true: "true", false: "false"}[on] + `}}`)
		if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("cordon %s %v: %v", node, on, err)
		}
	}
	cordon("ha-workers-0", true)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "mover", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "mover"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "mover"}}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{{Name: "pause", Image: pauseImage(t, cs), ImagePullPolicy: corev1.PullNever}}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "app=mover", "ha-workers-1")
	cordon("ha-workers-0", false)

	down := doc
	text = w.planText(t, down)
	for _, want := range []string{"- delete kubeadm-join/workers-1", "its node is drained", "- delete instance/workers-1", "- delete pod-route/workers-1",
		"Plan: 0 to create, 0 to update, 0 to replace, 4 to delete"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan of the scale-down lacks %q:\n%s", want, text)
		}
	}
	t1 := time.Now()
	before := len(w.log.String())
	if _, err := w.eng.Apply(ctx, awstest.Parse(t, down), engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply of the scale-down: %v", err)
	}
	ReadyAfterApply(t, kc, 4)
	t.Logf("scale-down: ha-workers-1 drained and gone in %.1fs", time.Since(t1).Seconds())
	// The node is drained while its pods' traffic still reaches it: before its route goes.
	applied := w.log.String()[before:]
	drained, routeGone := strings.Index(applied, "drain: ha-workers-1"), strings.Index(applied, "deleted pod-route/workers-1")
	if drained < 0 || routeGone < 0 || drained > routeGone {
		t.Errorf("the scale-down did not drain ha-workers-1 before deleting its pod route (drain at %d, route deleted at %d):\n%s", drained, routeGone, applied)
	}
	if _, ok := w.instances(t, "ha")["instance/workers-1"]; ok {
		t.Errorf("instance/workers-1 still runs after the scale-down")
	}
	waitPod(t, cs, "app=mover", "ha-workers-0")
	WaitMachinesReady(t, kc, 4)
	w.checkPodNet(t, cs)
}

// pauseImage is the pause image the nodes hold (nuv's node image carries it: nothing is pulled).
func pauseImage(t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		for _, im := range n.Status.Images {
			for _, name := range im.Names {
				if strings.HasPrefix(name, "registry.k8s.io/pause:") {
					return name
				}
			}
		}
	}
	t.Fatal("no node holds registry.k8s.io/pause")
	return ""
}

// waitPod waits until the one pod of selector runs on node (and no other of it is left).
func waitPod(t *testing.T, cs *kubernetes.Clientset, selector, node string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			last = err.Error()
			continue
		}
		var where []string
		ok := len(pods.Items) == 1
		for _, p := range pods.Items {
			where = append(where, p.Name+" "+string(p.Status.Phase)+" on "+p.Spec.NodeName)
			ok = ok && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == node
		}
		if ok {
			return
		}
		last = strings.Join(where, ", ")
	}
	t.Fatalf("pod %s does not run on %s: %s", selector, node, last)
}
