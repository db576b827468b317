package eks_test

import (
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awsworld"
	"regexp"
	"testing"
)

// firstChange is the first change line of a plan ("+ create vpc/lc").
var firstChange = regexp.MustCompile(`(?m)^\s*(\+|~|-/\+|-) [a-z]+ \S+`)

// TestIntegrationEKSKilledBeforeRecord kills nuv (kill -9) in the window that matters, again and
// again: each apply makes (or changes) the next network or IAM resource, its AWS call returns,
// and nuv dies before the record says so. The next apply must find what was made by its tags or
// name and make nothing twice: up to the EKS cluster, the emulator holds one VPC, four subnets,
// one internet gateway, one elastic IP, one NAT gateway, two route tables, one security group and
// two roles however often nuv was killed.
func TestIntegrationEKSKilledBeforeRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nuv against the AWS emulator; skipped under -short")
	}
	w := newWorld(t)
	f := w.Spec("lc", lifecycleSpec("1.35", 1, false))
	t.Cleanup(func() { w.Nuv(nil, "cluster", "delete", "lc") })
	kills := 0
	for ; kills < 30; kills++ {
		plan, errs, _ := w.Nuv(nil, "cluster", "plan", "-f", f)
		next := firstChange.FindString(plan)
		if next == "" {
			t.Fatalf("plan after %d kills has no change:\n%s%s", kills, plan, errs)
		}
		if regexp.MustCompile(`eks-cluster/`).MatchString(next) {
			break
		}
		_, errs, code := w.Nuv([]string{"NUV_FAILPOINT_KILL_BEFORE_RECORD=1"}, "cluster", "apply", "-f", f)
		if code != -1 {
			t.Fatalf("kill %d (%s): apply with the failpoint before the record: exit %d, want killed\n%s", kills, next, code, errs)
		}
		c := awsworld.Count(w.Tagged("lc"))
		if c["vpc"] > 1 || c["subnet"] > 4 || c["internet-gateway"] > 1 || c["elastic-ip"] > 1 || c["natgateway"] > 1 ||
			c["route-table"] > 2 || c["security-group"] > 1 || c["role"] > 2 {
			t.Fatalf("kill %d (%s): something was made twice: %v", kills, next, c)
		}
	}
	c := awsworld.Count(w.Tagged("lc"))
	if c["vpc"] != 1 || c["subnet"] != 4 || c["internet-gateway"] != 1 || c["elastic-ip"] != 1 || c["natgateway"] != 1 ||
		c["route-table"] != 2 || c["security-group"] != 1 || c["role"] != 2 {
		t.Fatalf("after %d killed applies, one of each network resource and two roles: %v", kills, c)
	}
	t.Logf("%d applies killed before their record; the emulator holds %v", kills, c)
}
