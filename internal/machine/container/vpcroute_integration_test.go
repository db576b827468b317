package container_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/machine/container"
)

// TestIntegrationLinkNetworks links two networks of a "VPC" 10.231.0.0/16 (10.231.0.0/24 and
// 10.231.128.0/24) and leaves a third (10.232.0.0/24, another VPC) out: a container in the first
// reaches a socat in the second, which sees the client's own address (no NAT); the third's
// container reaches neither; after UnlinkNetworks no rule of the link is left.
func TestIntegrationLinkNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: changes iptables and runs containers on the Docker daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := testLogger{t}
	rt := testRuntime(ctx, t)
	image := testImage(ctx, t, rt, log)
	mgr, err := container.New(rt, log)
	if err != nil {
		t.Fatal(err)
	}
	run := randomID(t)
	link := "test/vpc-" + run
	docker := dockerCLI(t, ctx, rt.Path)
	nets := []struct{ name, cidr, ip string }{
		{"nuv-ltest-a-" + run, "10.231.0.0/24", "10.231.0.10"},
		{"nuv-ltest-b-" + run, "10.231.128.0/24", "10.231.128.10"},
		{"nuv-ltest-c-" + run, "10.232.0.0/24", "10.232.0.10"},
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range nets {
			_ = exec.CommandContext(ctx, rt.Path, "rm", "-f", n.name).Run()
			_ = mgr.RemoveNetwork(ctx, n.name)
		}
		_ = mgr.UnlinkNetworks(ctx, link)
		_ = mgr.UnlinkNetworks(ctx, link+"-c")
	})
	for _, n := range nets {
		if err := mgr.EnsureNetwork(ctx, n.name, n.cidr, map[string]string{testLabel: run}); err != nil {
			t.Fatal(err)
		}
		docker("run", "-d", "--name", n.name, "--network", n.name, "--ip", n.ip, "--entrypoint", "socat", image,
			"TCP-LISTEN:7000,fork,reuseaddr", "SYSTEM:echo $SOCAT_PEERADDR")
	}
	if err := mgr.LinkNetworks(ctx, link, "10.231.0.0/16", []string{nets[0].name, nets[1].name}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.LinkNetworks(ctx, link, "10.231.0.0/16", []string{nets[0].name, nets[1].name}); err != nil {
		t.Fatalf("LinkNetworks again: %v", err)
	}
	// the other VPC has a link of its own (its bridge forwards, but only within the link)
	if err := mgr.LinkNetworks(ctx, link+"-c", "10.232.0.0/16", []string{nets[2].name}); err != nil {
		t.Fatal(err)
	}
	dial := func(from, to string) (string, error) {
		out, err := exec.CommandContext(ctx, rt.Path, "exec", from, "socat", "-T3", "STDIO", "TCP:"+to+":7000,connect-timeout=3").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	start := time.Now()
	got, err := dial(nets[0].name, nets[1].ip)
	if err != nil || got != nets[0].ip {
		t.Fatalf("a -> b: %q, %v; want b to see a's own address %s", got, err, nets[0].ip)
	}
	t.Logf("a -> b across subnets in %v, b saw %s", time.Since(start), got)
	if got, err := dial(nets[1].name, nets[0].ip); err != nil || got != nets[1].ip {
		t.Fatalf("b -> a: %q, %v; want %s", got, err, nets[1].ip)
	}
	// A DROP rule of the link lost (someone flushed it) comes back after the link's ACCEPT rules:
	// reconciling the link does not cut it.
	rules, _ := exec.CommandContext(ctx, "iptables", "-w", "-S", "FORWARD").CombinedOutput()
	dropped := false
	for _, line := range strings.Split(string(rules), "\n") {
		if strings.Contains(line, "nuv-vpc "+link+"\"") && strings.HasSuffix(line, "-j DROP") && !dropped {
			args := strings.Fields(strings.Replace(strings.Replace(line, `"nuv-vpc `+link+`"`, "NUVCOMMENT", 1), "-A ", "-D ", 1))
			for i, a := range args {
				if a == "NUVCOMMENT" {
					args[i] = "nuv-vpc " + link
				}
			}
			if out, err := exec.CommandContext(ctx, "iptables", append([]string{"-w"}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("delete %s: %v: %s", line, err, out)
			}
			dropped = true
		}
	}
	if !dropped {
		t.Fatalf("no DROP rule of %s in FORWARD:\n%s", link, rules)
	}
	if err := mgr.LinkNetworks(ctx, link, "10.231.0.0/16", []string{nets[0].name, nets[1].name}); err != nil {
		t.Fatalf("LinkNetworks after a DROP rule was lost: %v", err)
	}
	if got, err := dial(nets[0].name, nets[1].ip); err != nil || got != nets[0].ip {
		out, _ := exec.CommandContext(ctx, "iptables", "-w", "-S", "FORWARD").CombinedOutput()
		t.Fatalf("a -> b after the link was reconciled: %q, %v; want %s\n%s", got, err, nets[0].ip, out)
	}
	for _, c := range [][2]string{{nets[2].name, nets[0].ip}, {nets[0].name, nets[2].ip}} {
		if got, err := dial(c[0], c[1]); err == nil && got != "" {
			t.Errorf("%s reached %s across VPCs (%q)", c[0], c[1], got)
		}
	}
	if err := mgr.UnlinkNetworks(ctx, link); err != nil {
		t.Fatal(err)
	}
	if err := mgr.UnlinkNetworks(ctx, link+"-c"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-S", "FORWARD"}, {"-t", "nat", "-S", "POSTROUTING"}} {
		out, _ := exec.CommandContext(ctx, "iptables", args...).CombinedOutput()
		if strings.Contains(string(out), "nuv-vpc test/vpc-"+run) {
			t.Errorf("iptables %s after UnlinkNetworks still has rules of %s:\n%s", strings.Join(args, " "), link, out)
		}
	}
}
