package eks_test

import (
	"strings"
	"testing"
)

// TestIntegrationEKSStatusInTheRecordsRegion: `nuv cluster status` of an EKS cluster made in a
// region other than the environment's looks where the cluster's record says it is (the
// emulator serves eu-west-1 only and refuses requests signed for the environment's us-east-1).
func TestIntegrationEKSStatusInTheRecordsRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an emulated EKS cluster (a local control plane); skipped under -short")
	}
	w := newWorldIn(t, "eu-west-1")
	elsewhere := []string{"AWS_REGION=us-east-1"}
	t.Cleanup(func() { w.Nuv(elsewhere, "cluster", "delete", "--yes", "west") })
	f := w.Spec("west", `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: west}
spec:
  provider: eks
  region: eu-west-1
  nodeGroups:
  - {name: web, count: 1, instanceType: m6i.large}
  eks: {nat: single}
`)
	if out, errs, code := w.Nuv(elsewhere, "cluster", "apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply in eu-west-1: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code := w.Nuv(elsewhere, "cluster", "status", "west")
	if code != 0 || !strings.Contains(out, "west") || !strings.Contains(out, "running") {
		t.Fatalf("status with AWS_REGION=us-east-1 of a cluster in eu-west-1: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := w.Nuv(elsewhere, "cluster", "delete", "--yes", "west"); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	if got := w.Tagged("west"); len(got) != 0 {
		t.Fatalf("left after delete: %v", got)
	}
}
