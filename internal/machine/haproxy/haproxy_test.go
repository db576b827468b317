package haproxy

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func servers(addrs ...string) []Server {
	var s []Server
	for i, a := range addrs {
		s = append(s, Server{Name: "m" + string(rune('0'+i)), Address: a, Port: 6443})
	}
	return s
}

// TestRender pins the rendered configurations: defaults, several frontends, explicit checks and
// timeouts.
func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"api-defaults", Config{Frontends: []Frontend{{Name: "kube-apiserver", Port: 6443, Servers: servers("10.0.1.10", "10.0.1.11", "10.0.1.12")}}}},
		{"two-frontends", Config{
			ConnectTimeout: 3 * time.Second, IdleTimeout: 90 * time.Minute, MaxConn: 1000,
			Frontends: []Frontend{
				{Name: "api", Address: "10.0.1.5", Port: 6443, Servers: servers("10.0.1.10"), Check: Check{Interval: 500 * time.Millisecond, Rise: 1, Fall: 3}},
				{Name: "etcd", Address: "10.0.1.5", Port: 2379, Servers: []Server{{Name: "etcd-0", Address: "10.0.2.10", Port: 2379}, {Name: "etcd-1", Address: "10.0.2.11", Port: 2379}}, Check: Check{Interval: 10 * time.Second}},
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Render(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".cfg"), string(b), *update)
		})
	}
}

// TestRenderRefuses names the wrong value of each bad configuration.
func TestRenderRefuses(t *testing.T) {
	ok := Frontend{Name: "api", Port: 6443, Servers: servers("10.0.0.1")}
	with := func(f func(*Frontend)) Config {
		fe := ok
		fe.Servers = append([]Server(nil), ok.Servers...)
		f(&fe)
		return Config{Frontends: []Frontend{fe}}
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no frontend", Config{}, "no frontend"},
		{"bad name", with(func(f *Frontend) { f.Name = "a b" }), `frontend 1 ("a b"): the name`},
		{"port", with(func(f *Frontend) { f.Port = 70000 }), "port 70000 is not 1-65535"},
		{"bind v6", with(func(f *Frontend) { f.Address = "::1" }), `address "::1" is not an IPv4 address`},
		{"no server", with(func(f *Frontend) { f.Servers = nil }), "no server"},
		{"server address", with(func(f *Frontend) { f.Servers[0].Address = "" }), `server "m0": address "" is not an IPv4 address`},
		{"server twice", with(func(f *Frontend) { f.Servers = append(f.Servers, f.Servers[0]) }), `a second server named "m0"`},
		{"check", with(func(f *Frontend) { f.Check.Rise = -1 }), "rise, fall at least 1"},
		{"same name", Config{Frontends: []Frontend{ok, ok}}, "a second frontend of that name"},
		{"same bind", Config{Frontends: []Frontend{ok, {Name: "b", Port: 6443, Servers: ok.Servers}}}, `bind :6443 is frontend "api"'s too`},
		{"timeout", Config{Frontends: []Frontend{ok}, IdleTimeout: -time.Second}, "timeouts must be at least 1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Minute: "90m", 5 * time.Second: "5s", 1500 * time.Millisecond: "1500ms", 2*time.Millisecond + 300*time.Microsecond: "2ms",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%s) = %q, want %q", d, got, want)
		}
	}
}
