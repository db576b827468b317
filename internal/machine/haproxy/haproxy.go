// Package haproxy renders an haproxy.cfg that balances TCP: each frontend listens on an address
// and port and spreads connections round-robin over the servers of its backend, which HAProxy
// checks with TCP connects (a server that fails Fall checks in a row is taken out, one that passes
// Rise in a row is put back). The timeouts suit a Kubernetes API server behind it: a watch is a
// connection that can stay quiet for many minutes, so the idle timeouts are long, the connect
// timeout short. The emulator's load balancers and a self-managed cluster's load-balancer machine
// both run what it renders, with Debian's haproxy (`haproxy -c -f` validates it).
package haproxy

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"text/template"
	"time"
)

// Config is one haproxy.cfg.
type Config struct {
	// Frontends are the listeners; at least one.
	Frontends []Frontend
	// ConnectTimeout bounds a connection to a server (default 5s).
	ConnectTimeout time.Duration
	// IdleTimeout is how long a connection may stay quiet, either side, before HAProxy closes it
	// (default 1h: longer than the API server's longest watch, which ends in 30-60 minutes).
	IdleTimeout time.Duration
	// MaxConn is HAProxy's limit of concurrent connections (default 4096).
	MaxConn int
}

// Frontend listens on Address:Port and sends what comes to its servers.
type Frontend struct {
	// Name names the frontend and its backend (letters, digits, '-', '_', '.').
	Name string
	// Address is the IPv4 address to listen on ("": every address); Port the port.
	Address string
	Port    int
	// Servers are where connections go; at least one.
	Servers []Server
	// Check is how the servers are checked.
	Check Check
}

// Server is one destination of a backend.
type Server struct {
	// Name names the server in HAProxy's logs and stats (letters, digits, '-', '_', '.').
	Name string
	// Address is the server's IPv4 address; Port its port.
	Address string
	Port    int
}

// Check is the TCP health check of a backend's servers.
type Check struct {
	// Interval is the time between checks (default 2s).
	Interval time.Duration
	// Rise is how many passed checks in a row put a server back (default 2); Fall how many
	// failed ones take it out (default 2).
	Rise, Fall int
}

func nameRE() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) }

// Render renders c, or says which value is wrong.
func Render(c Config) ([]byte, error) {
	if len(c.Frontends) == 0 {
		return nil, fmt.Errorf("haproxy config: no frontend")
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = time.Hour
	}
	if c.MaxConn == 0 {
		c.MaxConn = 4096
	}
	if c.ConnectTimeout < time.Millisecond || c.IdleTimeout < time.Millisecond || c.MaxConn < 0 {
		return nil, fmt.Errorf("haproxy config: timeouts must be at least 1ms and maxconn positive (connect %s, idle %s, maxconn %d)", c.ConnectTimeout, c.IdleTimeout, c.MaxConn)
	}
	type server struct{ Name, Addr string }
	type frontend struct {
		Name, Bind string
		Servers    []server
		Inter      string
		Rise, Fall int
	}
	var fes []frontend
	seen := map[string]bool{}
	binds := map[string]string{}
	for i, f := range c.Frontends {
		where := fmt.Sprintf("haproxy config: frontend %d (%q)", i+1, f.Name)
		if !nameRE().MatchString(f.Name) {
			return nil, fmt.Errorf("%s: the name must be letters, digits, '-', '_' and '.'", where)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("%s: a second frontend of that name", where)
		}
		seen[f.Name] = true
		bind, err := hostPort(f.Address, f.Port, true)
		if err != nil {
			return nil, fmt.Errorf("%s: bind: %w", where, err)
		}
		if other, ok := binds[bind]; ok {
			return nil, fmt.Errorf("%s: bind %s is frontend %q's too", where, bind, other)
		}
		binds[bind] = f.Name
		if len(f.Servers) == 0 {
			return nil, fmt.Errorf("%s: no server", where)
		}
		ck := f.Check
		if ck.Interval == 0 {
			ck.Interval = 2 * time.Second
		}
		if ck.Rise == 0 {
			ck.Rise = 2
		}
		if ck.Fall == 0 {
			ck.Fall = 2
		}
		if ck.Interval < time.Millisecond || ck.Rise < 1 || ck.Fall < 1 {
			return nil, fmt.Errorf("%s: check interval must be at least 1ms and rise, fall at least 1 (%s, %d, %d)", where, ck.Interval, ck.Rise, ck.Fall)
		}
		fe := frontend{Name: f.Name, Bind: bind, Inter: duration(ck.Interval), Rise: ck.Rise, Fall: ck.Fall}
		names := map[string]bool{}
		for j, s := range f.Servers {
			if !nameRE().MatchString(s.Name) {
				return nil, fmt.Errorf("%s: server %d (%q): the name must be letters, digits, '-', '_' and '.'", where, j+1, s.Name)
			}
			if names[s.Name] {
				return nil, fmt.Errorf("%s: server %d: a second server named %q", where, j+1, s.Name)
			}
			names[s.Name] = true
			addr, err := hostPort(s.Address, s.Port, false)
			if err != nil {
				return nil, fmt.Errorf("%s: server %q: %w", where, s.Name, err)
			}
			fe.Servers = append(fe.Servers, server{Name: s.Name, Addr: addr})
		}
		fes = append(fes, fe)
	}
	var b bytes.Buffer
	err := template.Must(template.New("haproxy.cfg").Parse(cfgText)).Execute(&b, map[string]any{
		"MaxConn":   c.MaxConn,
		"Connect":   duration(c.ConnectTimeout),
		"Idle":      duration(c.IdleTimeout),
		"Frontends": fes,
	})
	if err != nil {
		return nil, fmt.Errorf("haproxy config: %w", err)
	}
	return b.Bytes(), nil
}

// hostPort checks an IPv4 address and a port and joins them the way haproxy.cfg writes them; an
// empty address is every address where any is true.
func hostPort(addr string, port int, any bool) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("port %d is not 1-65535", port)
	}
	if addr == "" && any {
		return ":" + strconv.Itoa(port), nil
	}
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() {
		return "", fmt.Errorf("address %q is not an IPv4 address", addr)
	}
	return a.String() + ":" + strconv.Itoa(port), nil
}

// duration writes d in haproxy's time format: whole milliseconds, or seconds, minutes or hours
// when d is a whole number of them.
func duration(d time.Duration) string {
	d = d.Round(time.Millisecond)
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

const cfgText = `# haproxy.cfg written by nuv: TCP load balancing with TCP health checks.
global
    log /dev/log local0
    maxconn {{.MaxConn}}

defaults
    mode tcp
    log global
    option tcplog
    option dontlognull
    # A server that refuses a connection is tried again, then another one.
    retries 3
    option redispatch
    timeout connect {{.Connect}}
    # A Kubernetes API watch stays quiet for minutes: idle connections live long.
    timeout client {{.Idle}}
    timeout server {{.Idle}}
    timeout client-fin 30s
    timeout server-fin 30s
    timeout check {{.Connect}}
{{range .Frontends}}
frontend {{.Name}}
    bind {{.Bind}}
    default_backend {{.Name}}

backend {{.Name}}
    balance roundrobin
    default-server inter {{.Inter}} rise {{.Rise}} fall {{.Fall}}
{{- range .Servers}}
    server {{.Name}} {{.Addr}} check
{{- end}}
{{end -}}
`
