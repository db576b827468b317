package bootstrap

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// recMachine is a unit-level test double of Machine: a map of files, and the scripts it was asked
// to run (with what came on their standard input). It answers the existence checks the steps make
// from its files, applies a script's `touch` and `rm -f` of single files, and runs the handler of
// the first pattern a script matches (the effect of a kubeadm command on the files).
type recMachine struct {
	name, addr string
	files      map[string][]byte
	modes      map[string]fs.FileMode
	ran        []string
	stdin      []string
	handlers   []handler
	fail       *regexp.Regexp
}

type handler struct {
	re *regexp.Regexp
	fn func(m *recMachine)
}

func newRec(name, addr string) *recMachine {
	return &recMachine{name: name, addr: addr, files: map[string][]byte{}, modes: map[string]fs.FileMode{}}
}

func (m *recMachine) Name() string    { return m.name }
func (m *recMachine) Address() string { return m.addr }

var stateRE = regexp.MustCompile(`^\[ -e '([^']+)' \] && echo (\w+) && exit 0$`)

var existsRE = regexp.MustCompile(`^if \[ -e '([^']+)' \]`)

func (m *recMachine) Run(ctx context.Context, script string, stdin io.Reader) ([]byte, error) {
	m.ran = append(m.ran, script)
	in := ""
	if stdin != nil {
		b, _ := io.ReadAll(stdin)
		in = string(b)
	}
	m.stdin = append(m.stdin, in)
	if g := existsRE.FindStringSubmatch(script); g != nil {
		if _, ok := m.files[g[1]]; ok {
			return []byte("yes\n"), nil
		}
		return []byte("no\n"), nil
	}
	if strings.HasPrefix(script, "i=0\nwhile grep -qsx kubeadm") {
		for _, l := range strings.Split(script, "\n") {
			if g := stateRE.FindStringSubmatch(l); g != nil {
				if _, ok := m.files[g[1]]; ok {
					return []byte(g[2] + "\n"), nil
				}
			}
		}
		return []byte("none\n"), nil
	}
	if m.fail != nil && m.fail.MatchString(script) {
		return []byte("boom: " + in), fmt.Errorf("script on machine %s exited with code 1: kubeadm says %s", m.name, in)
	}
	for _, h := range m.handlers {
		if h.re.MatchString(script) {
			h.fn(m)
		}
	}
	for _, l := range strings.Split(script, "\n") {
		if p, ok := strings.CutPrefix(l, "touch "); ok {
			m.files[p] = nil
		}
		if p, ok := strings.CutPrefix(l, "rm -f "); ok && !strings.Contains(p, " ") {
			delete(m.files, p)
		}
	}
	return nil, nil
}

func (m *recMachine) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	m.files[path] = append([]byte(nil), data...)
	m.modes[path] = mode
	return nil
}

func (m *recMachine) ReadFile(ctx context.Context, path string) ([]byte, error) {
	b, ok := m.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: m.name + ":" + path, Err: fs.ErrNotExist}
	}
	return b, nil
}

// commands are the scripts m ran other than existence checks, one line each (their first line).
func (m *recMachine) commands() []string {
	var out []string
	for _, s := range m.ran {
		if existsRE.MatchString(s) || strings.HasPrefix(s, "i=0\nwhile grep -qsx kubeadm") {
			continue
		}
		out = append(out, strings.SplitN(s, "\n", 2)[0])
	}
	return out
}

// kubeadmInit is what `kubeadm init` leaves behind that the steps look at.
func kubeadmInit(ca []byte) handler {
	return handler{regexp.MustCompile(`(?m)^kubeadm init --config`), func(m *recMachine) {
		m.files[AdminConf] = []byte("admin")
		m.files[PKIDir+"/ca.crt"] = ca
	}}
}

func kubeadmJoin() handler {
	return handler{regexp.MustCompile(`(?m)^kubeadm join --config`), func(m *recMachine) { m.files[KubeletConf] = nil }}
}

func TestInitSteps(t *testing.T) {
	ca, err := NewCA("kubernetes", now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		files   map[string][]byte
		secrets Secrets
		want    []string
	}{
		{name: "fresh machine: init once, marker after it", want: []string{
			"kubeadm init --config /etc/kubernetes/nuv/init.yaml --upload-certs --skip-token-print --skip-certificate-key-print </dev/null >>/var/log/nuv-kubeadm.log 2>&1 || { rc=$?; tail -n 40 /var/log/nuv-kubeadm.log; " + kubeletReport + " exit $rc; }"}},
		{name: "initialised: nothing runs", files: map[string][]byte{initDone: nil, AdminConf: nil, PKIDir + "/ca.crt": ca.CertPEM}, want: nil},
		{name: "interrupted init: reset, then init", files: map[string][]byte{AdminConf: nil}, want: []string{
			"kubeadm reset -f >/dev/null 2>&1 || true",
			"kubeadm init --config /etc/kubernetes/nuv/init.yaml --upload-certs --skip-token-print --skip-certificate-key-print </dev/null >>/var/log/nuv-kubeadm.log 2>&1 || { rc=$?; tail -n 40 /var/log/nuv-kubeadm.log; " + kubeletReport + " exit $rc; }"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := goldenCluster(false, true)
			cp := c.ControlPlanes[0].(*recMachine)
			for k, v := range tc.files {
				cp.files[k] = v
			}
			cp.handlers = []handler{kubeadmInit(ca.CertPEM)}
			b := &Bootstrap{Cluster: c, Secrets: tc.secrets}
			if err := b.Init(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := cp.commands(); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if _, ok := cp.files[initDone]; !ok {
				t.Error("no init marker")
			}
			want, _ := CACertHash(ca.CertPEM)
			if b.Secrets.CACertHash != want {
				t.Errorf("CA hash %q, want %q", b.Secrets.CACertHash, want)
			}
			if tc.files == nil {
				if b.Secrets.Token == "" || len(b.Secrets.CertificateKey) != 64 {
					t.Errorf("init made no secrets")
				}
				if cp.modes[ConfigDir+"/init.yaml"] != 0o600 {
					t.Errorf("init.yaml mode %v, want 0600", cp.modes[ConfigDir+"/init.yaml"])
				}
				for _, s := range cp.ran {
					if strings.Contains(s, b.Secrets.Token) || strings.Contains(s, b.Secrets.CertificateKey) {
						t.Errorf("a script's text carries a secret: %q", s)
					}
				}
			}
		})
	}
}

func TestJoinSteps(t *testing.T) {
	ca, _ := NewCA("kubernetes", now())
	for _, tc := range []struct {
		name         string
		controlPlane bool
		files        map[string][]byte
		fresh        bool
		wantCP0      []string
		want         []string
	}{
		{name: "worker after init in this run", fresh: true,
			want: []string{"kubeadm join --config /etc/kubernetes/nuv/join.yaml </dev/null >>/var/log/nuv-kubeadm.log 2>&1 || { rc=$?; tail -n 40 /var/log/nuv-kubeadm.log; " + kubeletReport + " exit $rc; }"}},
		{name: "worker on a resumed apply: token and certificates first", controlPlane: false,
			wantCP0: []string{"read -r token"}, want: []string{"kubeadm join --config /etc/kubernetes/nuv/join.yaml </dev/null >>/var/log/nuv-kubeadm.log 2>&1 || { rc=$?; tail -n 40 /var/log/nuv-kubeadm.log; " + kubeletReport + " exit $rc; }"}},
		{name: "joined worker: nothing", files: map[string][]byte{joinDone: nil, KubeletConf: nil}},
		{name: "interrupted worker join: reset, node deleted, join", files: map[string][]byte{KubeletConf: nil}, fresh: true,
			wantCP0: []string{"kubectl --kubeconfig /etc/kubernetes/admin.conf delete node 'worker-0' --ignore-not-found >/dev/null 2>/tmp/nuv-kubectl.err || { i=0; until kubectl --kubeconfig /etc/kubernetes/admin.conf delete node 'worker-0' --ignore-not-found >/dev/null 2>/tmp/nuv-kubectl.err; do i=$((i+1)); if [ $i -ge 30 ]; then cat /tmp/nuv-kubectl.err >&2; exit 1; fi; sleep 2; done; }"},
			want:    []string{"kubeadm reset -f >/dev/null 2>&1 || true", "kubeadm join --config /etc/kubernetes/nuv/join.yaml </dev/null >>/var/log/nuv-kubeadm.log 2>&1 || { rc=$?; tail -n 40 /var/log/nuv-kubeadm.log; " + kubeletReport + " exit $rc; }"}},
		{name: "control plane", controlPlane: true, fresh: true,
			want: []string{"kubeadm join --config /etc/kubernetes/nuv/join.yaml </dev/null >>/var/log/nuv-kubeadm.log 2>&1 || { rc=$?; tail -n 40 /var/log/nuv-kubeadm.log; " + kubeletReport + " exit $rc; }"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := goldenCluster(false, true)
			cp0 := c.ControlPlanes[0].(*recMachine)
			cp0.files[initDone], cp0.files[AdminConf], cp0.files[PKIDir+"/ca.crt"] = nil, nil, ca.CertPEM
			m := c.Workers[0].(*recMachine)
			if tc.controlPlane {
				m = c.ControlPlanes[1].(*recMachine)
			}
			for k, v := range tc.files {
				m.files[k] = v
			}
			m.handlers = []handler{kubeadmJoin()}
			b := &Bootstrap{Cluster: c, fresh: tc.fresh}
			if tc.fresh {
				b.Secrets = goldenSecrets
			}
			var err error
			if tc.controlPlane {
				err = b.JoinControlPlane(context.Background(), m)
			} else {
				err = b.JoinWorker(context.Background(), m)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.commands(); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s ran:\n%s\nwant:\n%s", m.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if got := cp0.commands(); strings.Join(got, "\n") != strings.Join(tc.wantCP0, "\n") {
				t.Errorf("cp-0 ran:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantCP0, "\n"))
			}
			if len(tc.want) > 0 {
				if _, ok := m.files[joinDone]; !ok {
					t.Error("no join marker")
				}
				if _, ok := m.files[ConfigDir+"/join.yaml"]; ok {
					t.Error("join.yaml (it has the token) left on the machine")
				}
				if m.modes[ConfigDir+"/join.yaml"] != 0o600 {
					t.Errorf("join.yaml mode %v, want 0600", m.modes[ConfigDir+"/join.yaml"])
				}
			}
			if len(tc.wantCP0) > 0 && tc.wantCP0[0] == "read -r token" {
				// the token went on the standard input, the key in a 0600 file removed after
				if got := cp0.stdin[len(cp0.stdin)-1]; got != b.Secrets.Token+"\n" {
					t.Errorf("the token script's stdin is not the token")
				}
				if cp0.modes[uploadCerts] != 0o600 || !strings.Contains(string(cp0.files[uploadCerts]), "") {
					t.Errorf("upload-certs.yaml mode %v", cp0.modes[uploadCerts])
				}
			}
		})
	}
}

// TestErrorsNameStepAndMachineWithoutSecrets: a failing command's error says which step on which
// machine, and never carries the token or the key even when the tool printed them.
func TestErrorsNameStepAndMachineWithoutSecrets(t *testing.T) {
	c := goldenCluster(false, true)
	ca, _ := NewCA("kubernetes", now())
	cp0 := c.ControlPlanes[0].(*recMachine)
	cp0.files[initDone], cp0.files[AdminConf], cp0.files[PKIDir+"/ca.crt"] = nil, nil, ca.CertPEM
	cp0.fail = regexp.MustCompile(`read -r token`)
	b := &Bootstrap{Cluster: c}
	err := b.JoinWorker(context.Background(), c.Workers[0])
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "refresh join secrets on cp-0") {
		t.Errorf("error %q does not name the step and the machine", msg)
	}
	if strings.Contains(msg, b.Secrets.Token) || !strings.Contains(msg, "<redacted>") {
		t.Errorf("error %q carries the token or redacted nothing", msg)
	}
}

// TestLoadBalancerStep: HAProxy is started when it does not run, reloaded gracefully when its
// backends change, left alone when they do not; a control plane that leaves is drained out of
// the backends first and put back by the next configuration.
func TestLoadBalancerStep(t *testing.T) {
	c := goldenCluster(false, false)
	lb := newRec("lb", "10.0.1.5")
	c.LoadBalancer = lb
	b := &Bootstrap{Cluster: c}
	inactive := regexp.MustCompile(`^systemctl is-active`)
	for _, st := range []struct {
		name   string
		active bool
		do     func(ctx context.Context) error
		want   string // the command that applies the configuration ("": none runs)
		backs  []string
	}{
		{"first run: HAProxy is started", false, b.LoadBalancer, "systemctl restart haproxy", []string{"cp-0", "cp-1", "cp-2"}},
		{"same backends: nothing", true, b.LoadBalancer, "", []string{"cp-0", "cp-1", "cp-2"}},
		{"cp-1 drained before it leaves: a graceful reload", true, func(ctx context.Context) error { return b.DrainLoadBalancer(ctx, "cp-1") }, "systemctl reload haproxy", []string{"cp-0", "cp-2"}},
		{"cp-1 back: a graceful reload", true, b.LoadBalancer, "systemctl reload haproxy", []string{"cp-0", "cp-1", "cp-2"}},
		{"HAProxy stopped with the same backends: started", false, b.LoadBalancer, "systemctl restart haproxy", []string{"cp-0", "cp-1", "cp-2"}},
	} {
		lb.ran, lb.fail = nil, nil
		if !st.active {
			lb.fail = inactive
		}
		if err := st.do(context.Background()); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		last := lb.ran[len(lb.ran)-1]
		switch {
		case st.want == "" && len(lb.ran) != 1:
			t.Errorf("%s: ran %q, want only the is-active check", st.name, lb.commands())
		case st.want != "" && (!strings.HasPrefix(last, "haproxy -c -q -f /etc/kubernetes/nuv/haproxy.cfg") || !strings.Contains(last, st.want)):
			t.Errorf("%s: last script %q, want the staged configuration checked, moved in and %q", st.name, last, st.want)
		}
		if st.want != "" {
			lb.files[HAProxyConfigPath] = lb.files[ConfigDir+"/haproxy.cfg"] // what the script's mv did
		}
		cfg := string(lb.files[HAProxyConfigPath])
		for _, n := range []string{"cp-0", "cp-1", "cp-2"} {
			if got, want := strings.Contains(cfg, "server "+n+" "), slices.Contains(st.backs, n); got != want {
				t.Errorf("%s: backend %s in the configuration: %v, want %v\n%s", st.name, n, got, want, cfg)
			}
		}
	}
	// A lone control plane is not drained: HAProxy would have no backend.
	b.Cluster.ControlPlanes = b.Cluster.ControlPlanes[:1]
	lb.ran, lb.fail = nil, nil
	if err := b.DrainLoadBalancer(context.Background(), "cp-0"); err != nil || len(lb.ran) != 0 {
		t.Errorf("drain of the only control plane: %v, ran %q; want nothing", err, lb.commands())
	}
}

func TestStepsOrder(t *testing.T) {
	c := goldenCluster(true, true)
	c.LoadBalancer = newRec("lb", "10.0.1.5")
	b := &Bootstrap{Cluster: c}
	steps, err := b.Steps()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range steps {
		keys = append(keys, s.Key)
	}
	want := "load-balancer etcd-member/etcd-0 etcd-member/etcd-1 etcd-member/etcd-2 init join-control-plane/cp-1 join-control-plane/cp-2 join-worker/worker-0 pod-network kubeconfig"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("steps:\n%s\nwant:\n%s", got, want)
	}
	b.Cluster.Name = ""
	if _, err := b.Steps(); err == nil {
		t.Error("Steps of an invalid cluster: no error")
	}
}

func TestParsePodCIDRs(t *testing.T) {
	for _, tc := range []struct {
		out, want, err string
	}{
		{"10.244.1.0/24\n", "10.244.1.0/24", ""},
		{"10.244.2.0/24 fd00:10:244:2::/64\n", "10.244.2.0/24,fd00:10:244:2::/64", ""},
		{"\n", "", "node n has no pod range (spec.podCIDRs)"},
		{"10.244.1.1/24", "", `node n: pod range "10.244.1.1/24" is not a CIDR`},
		{"<none>", "", `node n: pod range "<none>" is not a CIDR`},
	} {
		got, err := parsePodCIDRs("n", tc.out)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("parsePodCIDRs(%q): %v, want %s", tc.out, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("parsePodCIDRs(%q) = %v, %v; want %s", tc.out, got, err, tc.want)
		}
	}
}
