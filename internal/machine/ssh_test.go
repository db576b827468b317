package machine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// sshServer is an SSH server on loopback (x/crypto/ssh's server side) that runs each exec
// request with this host's sh: enough of sshd to test pinning, dialling and reconnecting here;
// the integration test of internal/machine/container runs the real OpenSSH sshd.
type sshServer struct {
	t        *testing.T
	hostKey  *Key
	client   ssh.PublicKey
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
	accepted int
}

func newSSHServer(t *testing.T, client ssh.PublicKey) *sshServer {
	hk, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return &sshServer{t: t, hostKey: hk, client: client}
}

// listen starts serving on addr ("127.0.0.1:0" for any port) and returns the address.
func (s *sshServer) listen(addr string) string {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	s.t.Cleanup(func() { s.stop() })
	conf := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(k.Marshal(), s.client.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	conf.AddHostKey(s.hostKey.Signer())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.accepted++
			s.mu.Unlock()
			go s.serve(c, conf)
		}
	}()
	return ln.Addr().String()
}

func (s *sshServer) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// dropConnections closes every connection (a machine restarting), the listener stays.
func (s *sshServer) dropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

func (s *sshServer) stop() {
	s.dropConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
	}
}

func (s *sshServer) serve(c net.Conn, conf *ssh.ServerConfig) {
	_, chans, reqs, err := ssh.NewServerConn(c, conf)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer ch.Close()
			for r := range creqs {
				if r.Type != "exec" {
					r.Reply(false, nil)
					continue
				}
				n := binary.BigEndian.Uint32(r.Payload[:4])
				cmdline := string(r.Payload[4 : 4+n])
				r.Reply(true, nil)
				cmd := exec.Command("sh", "-c", cmdline)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				code := 0
				if err := cmd.Run(); err != nil {
					code = 255
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						code = ee.ExitCode()
					}
				}
				status := make([]byte, 4)
				binary.BigEndian.PutUint32(status, uint32(code))
				ch.SendRequest("exit-status", false, status)
				return
			}
		}()
	}
}

func sshKeys(t *testing.T) *Key {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSSH: the pinned key is required and a wrong one refused at once, naming both
// fingerprints; the dial waits for a machine whose sshd is not up yet; one connection serves many
// runs and a dropped one is dialled again.
func TestSSH(t *testing.T) {
	ctx := context.Background()
	client := sshKeys(t)
	srv := newSSHServer(t, client.PublicKey())
	addr := srv.listen("127.0.0.1:0")
	cfg := SSHConfig{Name: "i-0abc", Address: "10.0.1.5", Endpoint: addr, Key: client, HostKey: srv.hostKey.PublicKey(), Wait: 20 * time.Second}

	m, err := DialSSH(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Name() != "i-0abc" || m.Address() != "10.0.1.5" {
		t.Errorf("Name, Address = %s, %s", m.Name(), m.Address())
	}
	for i := 0; i < 3; i++ {
		out, err := m.Run(ctx, "cat; echo done", strings.NewReader("in\n"))
		if err != nil || string(out) != "in\ndone\n" {
			t.Fatalf("Run %d: %q %v", i, out, err)
		}
	}
	_, err = m.Run(ctx, "pw=topsecret; echo nope >&2; exit 4", nil)
	var re *RunError
	if !errors.As(err, &re) || re.ExitCode != 4 || re.Machine != "i-0abc" || !strings.Contains(re.Stderr, "nope") || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("failing script: %v", err)
	}
	if n := srv.connections(); n != 1 {
		t.Errorf("%d connections for 4 runs, want 1", n)
	}

	// The machine restarts: the next run dials again.
	srv.dropConnections()
	if out, err := m.Run(ctx, "echo back", nil); err != nil || string(out) != "back\n" {
		t.Errorf("Run after the connection dropped: %q %v", out, err)
	}

	t.Run("wrong host key", func(t *testing.T) {
		other := sshKeys(t)
		c := cfg
		c.HostKey = other.PublicKey()
		start := time.Now()
		_, err := DialSSH(ctx, c)
		var hk *HostKeyError
		if !errors.As(err, &hk) {
			t.Fatalf("%v, want a HostKeyError", err)
		}
		for _, s := range []string{"i-0abc", other.Fingerprint(), srv.hostKey.Fingerprint(), "refusing"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q does not name %s", err, s)
			}
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("a wrong host key was tried again (%s)", time.Since(start))
		}
	})

	t.Run("host key grace", func(t *testing.T) {
		// A machine first offers another key (cloud-init's), then nuv's: waited out, accepted.
		booting := newSSHServer(t, client.PublicKey())
		nuvs := booting.hostKey
		first, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		booting.hostKey = first
		a := booting.listen("127.0.0.1:0")
		go func() {
			time.Sleep(1500 * time.Millisecond)
			booting.stop()
			booting.hostKey = nuvs
			booting.listen(a)
		}()
		c := cfg
		c.Endpoint, c.HostKey, c.HostKeyGrace = a, nuvs.PublicKey(), 10*time.Second
		m, err := DialSSH(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		// A grace that passes with the other key still there is a refusal.
		c.HostKey, c.HostKeyGrace = first.PublicKey(), 1500*time.Millisecond
		var hk *HostKeyError
		if _, err := DialSSH(ctx, c); !errors.As(err, &hk) {
			t.Errorf("%v, want a HostKeyError after the grace", err)
		}
	})

	t.Run("sshd comes up late", func(t *testing.T) {
		late := newSSHServer(t, client.PublicKey())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lateAddr := ln.Addr().String()
		ln.Close()
		go func() {
			time.Sleep(2 * time.Second)
			late.listen(lateAddr)
		}()
		c := cfg
		c.Endpoint, c.HostKey = lateAddr, late.hostKey.PublicKey()
		start := time.Now()
		m, err := DialSSH(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("answered after %s, before the server listened", d)
		}
	})

	t.Run("no answer", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.Endpoint, c.Wait = ln.Addr().String(), 1500*time.Millisecond
		ln.Close()
		_, err = DialSSH(ctx, c)
		if err == nil || !strings.Contains(err.Error(), "no answer in 1.5s") || !strings.Contains(err.Error(), "i-0abc") {
			t.Errorf("%v, want a timeout naming the machine", err)
		}
	})

	t.Run("refused config", func(t *testing.T) {
		for _, c := range []SSHConfig{{Address: "x", Key: client, HostKey: client.PublicKey()}, {Name: "m", Address: "x", Key: client}} {
			if _, err := DialSSH(ctx, c); err == nil {
				t.Errorf("DialSSH(%+v) accepted", c)
			}
		}
	})
}
