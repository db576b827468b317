package eks_test

import (
	"testing"
)

// TestIntegrationEKSKilledBeforeRecord kills nuv (kill -9) in the window that matters, again and
// again: each apply makes the next network resource, its AWS call returns, and nuv dies before
// the record says so. The next apply must find what was made by its tags and make nothing twice:
// the emulator holds one VPC, four subnets, one internet gateway, one elastic IP, one NAT gateway
// and two route tables and one security group however often nuv was killed.
func TestIntegrationEKSKilledBeforeRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nuv against the AWS emulator; skipped under -short")
	}
	w := newWorld(t)
	f := w.spec("kw", lifecycleSpec("1.35", 1, false))
	t.Cleanup(func() { w.nuv(nil, "cluster", "delete", "kw") })
	// vpc, 4 subnets, internet gateway, elastic IP, NAT gateway, 2 route tables, security group: 11
	// steps, each killed once before its record.
	for run := 0; run < 11; run++ {
		_, errs, code := w.nuv([]string{"NUV_FAILPOINT_KILL_BEFORE_RECORD=1"}, "cluster", "apply", "-f", f)
		if code != -1 {
			t.Fatalf("run %d: apply with the failpoint before the record: exit %d, want killed\n%s", run, code, errs)
		}
		c := count(w.tagged("kw"))
		if c["vpc"] > 1 || c["subnet"] > 4 || c["internet-gateway"] > 1 || c["elastic-ip"] > 1 || c["natgateway"] > 1 || c["route-table"] > 2 || c["security-group"] > 1 {
			t.Fatalf("run %d: something was made twice: %v", run, c)
		}
	}
	c := count(w.tagged("kw"))
	if c["vpc"] != 1 || c["subnet"] != 4 || c["internet-gateway"] != 1 || c["elastic-ip"] != 1 || c["natgateway"] != 1 || c["route-table"] != 2 || c["security-group"] != 1 {
		t.Fatalf("after 11 killed applies, one of each network resource: %v", c)
	}
	rec := readRecord(t, w.home, "kw")
	t.Logf("record after the kills: %d resources, emulator: %v", len(rec.Resources), c)
}
