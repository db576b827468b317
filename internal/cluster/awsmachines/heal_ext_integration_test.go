package awsmachines_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster/awsmachines"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// healLB terminates the load-balancer machine (lb-0, the cluster's endpoint) through the SDK: the
// API does not answer through it any more; the plan shows the machine and its HAProxy to make
// again; a healing apply killed right after the launch leaves one machine, which the next apply
// finds and configures. The machine is at its old address (the endpoint every kubeconfig and the
// API's certificate name); the API answers through it with the control plane Ready, it takes a
// write, and the plan is empty.
func healLB(t *testing.T, w *world, f string, cs *kubernetes.Clientset) {
	ctx := context.Background()
	ms := w.machines(t, "ext")
	if len(ms["instance/lb-0"]) != 1 {
		t.Fatalf("load-balancer machine: %v", ms["instance/lb-0"])
	}
	lost := ms["instance/lb-0"][0]
	t0 := time.Now()
	if _, err := w.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{lost.id}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); len(w.machines(t, "ext")["instance/lb-0"]) != 0; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("lb-0 (%s) is not terminated after 2m", lost.id)
		}
	}
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Errorf("the API answers through the load balancer whose machine %s is terminated", lost.id)
	}
	out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "create instance/lb-0") || !strings.Contains(out, "create haproxy/lb-0") || strings.Contains(out, "kubeadm-init") {
		t.Fatalf("plan after lb-0 was terminated: exit %d; want lb-0 and its HAProxy to make again, no kubeadm init\n%s%s", code, out, errs)
	}
	// The healing apply is killed (kill -9) right after ec2:RunInstances answered for the new
	// machine, before the record says so: the next apply finds it by its tags, and one machine
	// is launched, not two.
	step := 0
	for i, m := range planChange.FindAllStringSubmatch(out, -1) {
		if m[2] == "instance/lb-0" {
			step = i + 1
		}
	}
	t1 := time.Now()
	kout, kerrs, code := w.Nuv([]string{fmt.Sprintf("NUV_FAILPOINT_KILL_BEFORE_RECORD=%d", step)}, "cluster", "apply", "--yes", "-f", f)
	if code != -1 {
		t.Fatalf("the heal killed after launching lb-0 (step %d): exit %d, want killed\n%s%s", step, code, kout, kerrs)
	}
	if n := len(w.machines(t, "ext")["instance/lb-0"]); n != 1 {
		t.Fatalf("after the heal was killed: %d machines of lb-0, want 1", n)
	}
	out, errs, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || strings.Contains(out, "create instance/lb-0") || !strings.Contains(out, "create haproxy/lb-0") {
		t.Fatalf("plan after the heal was killed: exit %d; want lb-0 found, its HAProxy to make\n%s%s", code, out, errs)
	}
	out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 {
		t.Fatalf("apply after lb-0 was terminated and the heal killed: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("heal of instance/lb-0, killed once after its launch: %.1fs, %.1fs after the loss", time.Since(t1).Seconds(), time.Since(t0).Seconds())
	now := w.machines(t, "ext")
	checkMachines(t, "after the load balancer's heal", now)
	// The killed apply launched it at its address (its output is lost with it: the address says).
	if m := now["instance/lb-0"]; len(m) != 1 || m[0].id == lost.id || m[0].ip != lost.ip {
		t.Errorf("lb-0 after the heal: %+v; want a new machine at %s (it was %s)", m, lost.ip, lost.id)
	}
	kc := kit.KubeconfigPath(w.Project, "ext")
	awsmachines.ReadyAfterApply(t, kc, 1)
	writeThroughLB(t, ctx, cs, "after-lb-heal")
	if out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the load balancer's heal is not empty: exit %d\n%s%s", code, out, errs)
	}
}
