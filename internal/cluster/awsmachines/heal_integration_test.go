package awsmachines

import (
	"context"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/bootstrap"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/machine"
)

// healCase is one loss on the stacked cluster ha of TestIntegrationMachinesHeal: the machines
// terminated at once behind nuv's back, and the emulator's faults during the heal.
type healCase struct {
	name   string
	lost   []string // instance keys
	faults string   // JSON list, or ""
	// healed checks what the healing apply printed.
	healed func(t *testing.T, out string)
}

// stackedHeals are the losses healed in turn on cluster ha, each with the quorum surviving: a
// control plane (its replacement's first launch failed by EC2), the control plane kubeadm
// initialised (its node and etcd member cleaned up through a surviving control plane), and a
// worker and a control plane at once.
var stackedHeals = []healCase{
	{name: "control-plane-1", lost: []string{"instance/control-plane-1"},
		// EC2 fails the replacement's first launch on its side (Server.InternalError): the apply
		// launches it again, as an Auto Scaling group would.
		faults: `[{"operation": "ec2:RunInstances", "kind": "launch-failure", "count": 1}]`,
		healed: func(t *testing.T, out string) {
			if !strings.Contains(out, "Internal error on launch") || !strings.Contains(out, "launching it again (launch 2 of 3)") {
				t.Errorf("the heal's launch that EC2 failed was not launched again:\n%s", out)
			}
		}},
	{name: "init-control-plane-0", lost: []string{"instance/control-plane-0"}},
	{name: "worker-and-control-plane-2", lost: []string{"instance/workers-0", "instance/control-plane-2"}},
}

// heal terminates hc's machines through the EC2 API: the API keeps answering through the load
// balancer and a write succeeds; the plan shows each machine, its join and its pod network's
// steps to make again and no second kubeadm init; apply replaces them, with every node Ready when
// it returns, the pod routes on the new machines, the etcd members the three control planes, the
// write kept, and the plan empty after.
func (w *machinesWorld) heal(t *testing.T, c string, cs *kubernetes.Clientset, hc healCase) {
	ctx := context.Background()
	kc := w.p.KubeconfigPath("ha")
	before := w.running(t, "ha")
	var ids []string
	for _, k := range hc.lost {
		if before[k] == "" {
			t.Fatalf("no %s among %v", k, before)
		}
		ids = append(ids, before[k])
	}
	t0 := time.Now()
	if _, err := w.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		now := w.running(t, "ha")
		if !slices.ContainsFunc(hc.lost, func(k string) bool { return now[k] != "" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v not terminated after 2 minutes", hc.lost)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written-while-degraded-" + hc.name, Namespace: "default"}, Data: map[string]string{"a": "b"}}
	var werr error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		if _, werr = cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); werr == nil {
			break
		}
	}
	if werr != nil {
		t.Fatalf("a write through the load balancer with %v lost: %v", hc.lost, werr)
	}
	plan := w.planText(t, c)
	for _, k := range hc.lost {
		_, n, _ := strings.Cut(k, "/")
		for _, want := range []string{"create instance/" + n, "create kubeadm-join/" + n, "create source-dest-check/" + n, "create pod-route/" + n} {
			if !strings.Contains(plan, want) {
				t.Errorf("the plan after the loss lacks %q:\n%s", want, plan)
			}
		}
	}
	if strings.Contains(plan, "kubeadm-init") {
		t.Errorf("the plan after the loss runs kubeadm init again:\n%s", plan)
	}
	if hc.faults != "" {
		w.setFaults(t, hc.faults)
	}
	logged := len(w.log.String())
	t1 := time.Now()
	if _, err := w.eng.Apply(ctx, awstest.Parse(t, c), engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply after the loss of %v: %v", hc.lost, err)
	}
	applied := time.Since(t1)
	if hc.healed != nil {
		hc.healed(t, w.log.String()[logged:])
	}
	ReadyAfterApply(t, kc, 4)
	if hc.faults != "" {
		w.setFaults(t, `[]`)
	}
	WaitMachinesReady(t, kc, 4)
	t.Logf("heal of %s: apply %.1fs, %.1fs after the loss", strings.Join(hc.lost, " and "), applied.Seconds(), time.Since(t0).Seconds())
	routes := w.checkPodNet(t, cs)
	for _, id := range ids {
		if routes[id] != "" {
			t.Errorf("a route of pods %s still leads to the lost machine %s", routes[id], id)
		}
	}
	if got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil || got.Data["a"] != "b" {
		t.Errorf("the write made while degraded: %v %v", got, err)
	}
	w.checkStackedEtcd(t, ctx)
	if p, err := w.eng.Plan(ctx, awstest.Parse(t, c)); err != nil || !p.Empty() {
		var b strings.Builder
		if p != nil {
			engine.WritePlan(&b, p)
		}
		t.Errorf("the plan after healing %v is not empty (%v):\n%s", hc.lost, err, b.String())
	}
}

// checkStackedEtcd asks etcd (through the control planes' machines, with docker exec) for its
// members: the three control planes, no member of a lost machine left.
func (w *machinesWorld) checkStackedEtcd(t *testing.T, ctx context.Context) {
	t.Helper()
	var cps []bootstrap.Machine
	for k, in := range w.instances(t, "ha") {
		if strings.HasPrefix(k, "instance/control-plane-") {
			cps = append(cps, &machine.Exec{Runtime: "docker", Container: *in.InstanceId, IP: *in.PrivateIpAddress})
		}
	}
	b := &bootstrap.Bootstrap{Cluster: bootstrap.Cluster{Name: "ha", ControlPlanes: cps}}
	members, err := b.EtcdMembers(ctx)
	slices.Sort(members)
	if err != nil || strings.Join(members, ",") != "ha-control-plane-0,ha-control-plane-1,ha-control-plane-2" {
		t.Errorf("etcd members: %v %v, want ha-control-plane-0, ha-control-plane-1 and ha-control-plane-2", members, err)
	}
}
