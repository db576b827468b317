package container_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/machine"
	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/haproxy"
	"github.com/nuv-dev/nuv/internal/machine/userdata"
)

// testLabel marks what one run of the test made, so its cleanup removes exactly that.
const testLabel = "dev.nuv.test-run"

type testLogger struct{ t *testing.T }

func (l testLogger) Infof(f string, a ...any) { l.t.Logf(f, a...) }
func (l testLogger) Warnf(f string, a ...any) { l.t.Logf("warning: "+f, a...) }
func (l testLogger) V(int) cli.InfoLogger     { return l }
func (l testLogger) Enabled() bool            { return true }

// node is one machine of the test: its container, its keys and its SSH connection.
type node struct {
	name    string
	ip      string
	hostKey *machine.Key
	info    container.Info
	ssh     *machine.SSH
	toSSH   time.Duration
}

// TestIntegrationMachines runs three machines from nuv's node image on the shared Docker daemon:
// two with fixed addresses and user data that nuv reaches over SSH with their pinned host keys
// (scripts, stdin, atomic writes and reads, a wrong pinned key refused, one machine reaching
// the other), and an HAProxy machine with a rendered config balancing TCP over listeners on both,
// its health checks taking a stopped listener out. A stopped and started machine keeps its
// address and does not run its user data again; removing leaves no container, volume or network.
func TestIntegrationMachines(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs machine containers on the Docker daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	log := testLogger{t}
	rt := testRuntime(ctx, t)
	image := testImage(ctx, t, rt, log)
	mgr, err := container.New(rt, log)
	if err != nil {
		t.Fatal(err)
	}
	run := randomID(t)
	labels := map[string]string{testLabel: run}
	network := "nuv-mtest-" + run

	var volumes []string
	var volMu sync.Mutex
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		left, err := mgr.List(ctx, labels)
		if err != nil {
			t.Errorf("cleanup: %v", err)
		}
		for _, m := range left {
			if err := mgr.Remove(ctx, m.Name); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		if err := mgr.RemoveNetwork(ctx, network); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})

	// A subnet no other network of the daemon has (10.203.1.0/24 unless it is taken).
	cidr, prefix := "", ""
	for i := 1; i < 40 && cidr == ""; i++ {
		c := fmt.Sprintf("10.203.%d.0/24", i)
		err := mgr.EnsureNetwork(ctx, network, c, labels)
		if err == nil {
			cidr, prefix = c, fmt.Sprintf("10.203.%d.", i)
			break
		}
		if !strings.Contains(err.Error(), "overlap") {
			t.Fatal(err)
		}
	}
	if cidr == "" {
		t.Fatal("no free subnet in 10.203.1-39.0/24")
	}
	if err := mgr.EnsureNetwork(ctx, network, cidr, labels); err != nil {
		t.Fatalf("EnsureNetwork again with the same subnet: %v", err)
	}
	if err := mgr.EnsureNetwork(ctx, network, "10.204.0.0/24", labels); err == nil || !strings.Contains(err.Error(), "exists with subnet "+cidr) {
		t.Fatalf("EnsureNetwork with another subnet: %v, want a refusal naming %s", err, cidr)
	}

	client, err := machine.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*node{{name: "a"}, {name: "b"}, {name: "lb"}}
	for i, n := range nodes {
		n.name = "nuv-mtest-" + run + "-" + n.name
		n.ip = prefix + fmt.Sprint(10+i)
		if n.hostKey, err = machine.NewKey(); err != nil {
			t.Fatal(err)
		}
	}
	// The machines boot side by side, as an emulator's instances do.
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hostname := strings.TrimPrefix(n.name, "nuv-mtest-"+run+"-")
			ud, err := userdata.Script(userdata.Config{
				Hostname: hostname, HostKey: n.hostKey,
				AuthorizedKeys: []string{client.AuthorizedKey("nuv")},
				Then:           "mkdir -p /var/lib/nuv-test\necho ran >> /var/lib/nuv-test/user-data-runs\n",
			})
			if err != nil {
				errs[i] = err
				return
			}
			start := time.Now()
			n.info, err = mgr.Run(ctx, container.Spec{Name: n.name, Hostname: hostname, Image: image, Network: network, IP: n.ip, Labels: labels, UserData: ud})
			if err != nil {
				errs[i] = err
				return
			}
			booted := time.Since(start)
			volMu.Lock()
			volumes = append(volumes, n.info.Volumes...)
			volMu.Unlock()
			n.ssh, err = machine.DialSSH(ctx, machine.SSHConfig{Name: n.name, Address: n.info.IP, Key: client, HostKey: n.hostKey.PublicKey(), Log: log, Wait: time.Minute})
			n.toSSH = time.Since(start)
			if err == nil {
				timing, _ := n.ssh.Run(ctx, "grep '^nuv machine' "+container.OutputLog+"; cat "+container.BootFinished, nil)
				t.Logf("%s", timing)
				t.Logf("machine %s: booted and user data run in %s; SSH answered %s after Run began", n.name, booted.Round(10*time.Millisecond), n.toSSH.Round(10*time.Millisecond))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, n := range nodes {
		if n.ssh != nil {
			defer n.ssh.Close()
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	a, b, lb := nodes[0], nodes[1], nodes[2]

	t.Run("inspect", func(t *testing.T) {
		for _, n := range nodes {
			info, err := mgr.Inspect(ctx, n.name)
			if err != nil {
				t.Fatal(err)
			}
			if info.IP != n.ip || info.Network != network || !info.Running || info.Labels[testLabel] != run || len(info.Volumes) != 1 {
				t.Errorf("Inspect(%s) = %+v, want running on %s at %s with one volume", n.name, info, network, n.ip)
			}
		}
		list, err := mgr.List(ctx, labels)
		if err != nil || len(list) != 3 || list[0].Name != a.name {
			t.Errorf("List = %v, %v; want the 3 machines by name", list, err)
		}
		if _, err := mgr.Inspect(ctx, "nuv-mtest-"+run+"-none"); !errors.Is(err, container.ErrNotFound) {
			t.Errorf("Inspect of a missing machine: %v, want ErrNotFound", err)
		}
	})

	t.Run("run", func(t *testing.T) {
		out, err := a.ssh.Run(ctx, "id -u; hostname; cat", strings.NewReader("from stdin\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(out), "0\na\nfrom stdin\n"; got != want {
			t.Errorf("Run = %q, want %q", got, want)
		}
		_, err = a.ssh.Run(ctx, "token=s3cret-in-script\necho first >&2\nfalse\necho never", nil)
		var re *machine.RunError
		if !errors.As(err, &re) || re.ExitCode != 1 || re.Machine != a.name || !strings.Contains(re.Stderr, "first") {
			t.Fatalf("a failing script: %#v, want a RunError with code 1 and its stderr", err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error carries the script: %v", err)
		}
		// The same through the runtime's exec.
		out, err = mgr.Machine(b.info).Run(ctx, "hostname; exit 0", nil)
		if err != nil || string(out) != "b\n" {
			t.Errorf("Exec Run = %q, %v", out, err)
		}
	})

	t.Run("files", func(t *testing.T) {
		data := []byte("line one\nsecret: yes\n\x00binary\xff")
		for _, m := range []machine.Machine{a.ssh, mgr.Machine(b.info)} {
			p := "/etc/nuv-test/deep/dir/conf"
			if err := m.WriteFile(ctx, p, data, 0o640); err != nil {
				t.Fatal(err)
			}
			got, err := m.ReadFile(ctx, p)
			if err != nil || string(got) != string(data) {
				t.Errorf("%s: ReadFile = %q, %v; want %q", m.Name(), got, err, data)
			}
			st, err := m.Run(ctx, "stat -c %a "+p+"; ls -a /etc/nuv-test/deep/dir", nil)
			if err != nil || string(st) != "640\n.\n..\nconf\n" {
				t.Errorf("%s: mode and directory after WriteFile: %q, %v; want 640 and no temporary file", m.Name(), st, err)
			}
			if _, err := m.ReadFile(ctx, "/etc/nuv-test/none"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: ReadFile of a missing file: %v, want fs.ErrNotExist", m.Name(), err)
			}
		}
	})

	t.Run("host key pinned", func(t *testing.T) {
		start := time.Now()
		_, err := machine.DialSSH(ctx, machine.SSHConfig{Name: a.name, Address: a.ip, Key: client, HostKey: b.hostKey.PublicKey(), Wait: time.Minute})
		var hk *machine.HostKeyError
		if !errors.As(err, &hk) {
			t.Fatalf("dial with B's key pinned for A: %v, want a HostKeyError", err)
		}
		for _, s := range []string{a.name, a.hostKey.Fingerprint(), b.hostKey.Fingerprint()} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("the refusal %q does not name %s", err, s)
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("a wrong host key was retried (%s)", time.Since(start))
		}
		// The only host key is nuv's: sshd offers no other type.
		out, err := a.ssh.Run(ctx, "ls /etc/ssh/ | grep '^ssh_host_'; sshd -T | grep -i '^hostkey '; sshd -T | grep -i -e '^passwordauthentication' -e '^permitrootlogin'", nil)
		if want := "ssh_host_ed25519_key\nssh_host_ed25519_key.pub\nhostkey /etc/ssh/ssh_host_ed25519_key\npermitrootlogin without-password\npasswordauthentication no\n"; err != nil || string(out) != want {
			t.Errorf("host keys and sshd settings: %q, %v; want %q", out, err, want)
		}
	})

	t.Run("network", func(t *testing.T) {
		out, err := a.ssh.Run(ctx, "timeout 10 bash -c 'exec 3<>/dev/tcp/"+b.ip+"/22; head -c 7 <&3'", nil)
		if err != nil || string(out) != "SSH-2.0" {
			t.Errorf("A reaching B's sshd at %s: %q, %v", b.ip, out, err)
		}
	})

	t.Run("haproxy", func(t *testing.T) {
		for _, n := range []*node{a, b} {
			tag := strings.TrimPrefix(n.name, "nuv-mtest-"+run+"-")
			if _, err := n.ssh.Run(ctx, "systemd-run --unit nuv-echo socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo "+tag+"'", nil); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := haproxy.Render(haproxy.Config{Frontends: []haproxy.Frontend{{
			Name: "echo", Port: 80,
			Servers: []haproxy.Server{{Name: "a", Address: a.ip, Port: 8080}, {Name: "b", Address: b.ip, Port: 8080}},
			Check:   haproxy.Check{Interval: 300 * time.Millisecond, Rise: 1, Fall: 2},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := lb.ssh.WriteFile(ctx, "/etc/haproxy/haproxy.cfg", cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := lb.ssh.Run(ctx, "haproxy -c -f /etc/haproxy/haproxy.cfg 2>&1\nsystemctl enable haproxy.service 2>/dev/null\nsystemctl restart haproxy.service", nil); err != nil {
			t.Fatalf("haproxy -c and start: %v\n%s", err, out)
		}
		addr := net.JoinHostPort(lb.ip, "80")
		if seen := waitAnswers(t, addr, map[string]bool{"a": true, "b": true}); !seen {
			t.Fatal("the load balancer never sent connections to both machines")
		}
		// B's listener goes: its health check takes it out, and every connection goes to A.
		if _, err := b.ssh.Run(ctx, "systemctl stop nuv-echo", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		for i := 0; i < 6; i++ {
			if got := ask(addr); got != "a" {
				t.Errorf("connection %d with B's listener stopped went to %q, want a", i, got)
			}
		}
	})

	t.Run("stop start", func(t *testing.T) {
		if err := mgr.Stop(ctx, a.name); err != nil {
			t.Fatal(err)
		}
		if info, err := mgr.Inspect(ctx, a.name); err != nil || info.Running || info.IP != a.ip {
			t.Fatalf("after Stop: %+v, %v; want stopped, still at %s", info, err, a.ip)
		}
		start := time.Now()
		if err := mgr.Start(ctx, a.name); err != nil {
			t.Fatal(err)
		}
		// The connection of before the restart is gone: Run dials again, pinned the same.
		out, err := a.ssh.Run(ctx, "cat /var/lib/nuv-test/user-data-runs; hostname", nil)
		t.Logf("machine %s: SSH answered %s after Start", a.name, time.Since(start).Round(10*time.Millisecond))
		if err != nil || string(out) != "ran\na\n" {
			t.Errorf("after a restart: %q, %v; want the user data run once and the hostname kept", out, err)
		}
		if info, err := mgr.Inspect(ctx, a.name); err != nil || !info.Running || info.IP != a.ip {
			t.Errorf("after Start: %+v, %v; want running at %s", info, err, a.ip)
		}
	})

	t.Run("remove", func(t *testing.T) {
		if err := mgr.RemoveNetwork(ctx, network); err == nil || !strings.Contains(err.Error(), "still used by") {
			t.Errorf("RemoveNetwork with machines on it: %v, want a refusal naming them", err)
		}
		for _, n := range nodes {
			n.ssh.Close()
			if err := mgr.Remove(ctx, n.name); err != nil {
				t.Fatal(err)
			}
			if err := mgr.Remove(ctx, n.name); err != nil {
				t.Errorf("a second Remove: %v", err)
			}
		}
		if err := mgr.RemoveNetwork(ctx, network); err != nil {
			t.Fatal(err)
		}
		if left, err := mgr.List(ctx, labels); err != nil || len(left) != 0 {
			t.Errorf("machines left: %v, %v", left, err)
		}
		out, err := exec.Command(rt.Path, "volume", "ls", "-q").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range volumes {
			if strings.Contains(string(out), v) {
				t.Errorf("volume %s left", v)
			}
		}
		if len(volumes) != 3 {
			t.Errorf("%d volumes recorded, want 3", len(volumes))
		}
		if err := exec.Command(rt.Path, "network", "inspect", network).Run(); err == nil {
			t.Errorf("network %s left", network)
		}
	})
}

// waitAnswers asks addr until every name in want answered (or 30 s pass).
func waitAnswers(t *testing.T, addr string, want map[string]bool) bool {
	seen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got := ask(addr); want[got] {
			seen[got] = true
		}
		if len(seen) == len(want) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("answers seen: %v", seen)
	return false
}

// ask connects to addr and reads the one line the listener behind it says.
func ask(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return "error: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	b := make([]byte, 64)
	n, _ := c.Read(b)
	return strings.TrimSpace(string(b[:n]))
}

func randomID(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// dockerCLI runs the docker program at path with its arguments and returns its trimmed output;
// a failure ends the test with that output.
func dockerCLI(t *testing.T, ctx context.Context, path string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
}
