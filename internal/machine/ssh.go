package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nuv-dev/nuv/internal/cli"
)

// SSHConfig says how to reach one machine over SSH.
type SSHConfig struct {
	// Name is the machine's name (its instance ID); Address its private IPv4 address.
	Name, Address string
	// Endpoint is the host:port dialled (default Address:22): a public address, or a forwarded
	// port.
	Endpoint string
	// User is the user logged in as (default root).
	User string
	// Key is nuv's client key, which the machine's user data authorized.
	Key *Key
	// HostKey is the machine's host key, pinned: the machine must present exactly this key.
	HostKey ssh.PublicKey
	// HostKeyGrace is how long a machine presenting another host key is asked again before it is
	// refused (0: refused at once). A real EC2 instance offers the host keys cloud-init made
	// until its user data installed nuv's: dial it with a grace. A different key is never
	// accepted, only waited out.
	HostKeyGrace time.Duration
	// Wait is how long Dial keeps trying while the machine boots and its sshd comes up
	// (default 3 minutes).
	Wait time.Duration
	// Log receives the progress of a long dial (every 15 s); nil logs nothing.
	Log cli.Logger
}

// DefaultSSHWait is how long DialSSH waits for a machine's sshd by default.
const DefaultSSHWait = 3 * time.Minute

// progressEvery is how often a long dial says it is still waiting.
const progressEvery = 15 * time.Second

// SSH is a Machine reached over SSH: one connection, reused by every operation, and dialled
// again (with the same wait) when the machine dropped it, e.g. after a restart.
type SSH struct {
	cfg SSHConfig

	mu     sync.Mutex
	client *ssh.Client
}

var _ Machine = (*SSH)(nil)

// DialSSH connects to the machine cfg describes, trying again until cfg.Wait passes while the
// machine does not answer or its sshd is not up yet. A host key other than cfg.HostKey is a
// *HostKeyError, at once or after cfg.HostKeyGrace.
func DialSSH(ctx context.Context, cfg SSHConfig) (*SSH, error) {
	if cfg.Name == "" || cfg.Address == "" {
		return nil, errors.New("ssh to a machine: its name and address are required")
	}
	if cfg.Key == nil || cfg.HostKey == nil {
		return nil, fmt.Errorf("ssh to machine %s: nuv's client key and the machine's pinned host key are required", cfg.Name)
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = net.JoinHostPort(cfg.Address, "22")
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultSSHWait
	}
	if cfg.Log == nil {
		cfg.Log = cli.Quiet()
	}
	s := &SSH{cfg: cfg}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	s.client = c
	return s, nil
}

// Name is the machine's name.
func (s *SSH) Name() string { return s.cfg.Name }

// Address is the machine's private address.
func (s *SSH) Address() string { return s.cfg.Address }

// Close closes the connection.
func (s *SSH) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		return nil
	}
	err := s.client.Close()
	s.client = nil
	return err
}

func (s *SSH) clientConfig() *ssh.ClientConfig {
	fixed := ssh.FixedHostKey(s.cfg.HostKey)
	return &ssh.ClientConfig{
		User: s.cfg.User,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(s.cfg.Key.Signer())},
		HostKeyCallback: func(host string, remote net.Addr, key ssh.PublicKey) error {
			if fixed(host, remote, key) != nil {
				return &HostKeyError{Machine: s.cfg.Name, Address: s.cfg.Endpoint,
					Want: ssh.FingerprintSHA256(s.cfg.HostKey), Got: ssh.FingerprintSHA256(key)}
			}
			return nil
		},
		HostKeyAlgorithms: []string{s.cfg.HostKey.Type()},
		Timeout:           10 * time.Second,
	}
}

// dial connects, trying again every second until cfg.Wait passes.
func (s *SSH) dial(ctx context.Context) (*ssh.Client, error) {
	start := time.Now()
	deadline := start.Add(s.cfg.Wait)
	var lastLog time.Time
	conf := s.clientConfig()
	for attempt := 1; ; attempt++ {
		c, err := s.dialOnce(ctx, conf)
		if err == nil {
			if attempt > 1 {
				s.cfg.Log.V(1).Infof("machine %s: SSH answered after %s", s.cfg.Name, time.Since(start).Round(100*time.Millisecond))
			}
			return c, nil
		}
		var hk *HostKeyError
		if errors.As(err, &hk) && (time.Since(start) >= s.cfg.HostKeyGrace || time.Now().After(deadline)) {
			return nil, hk
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ssh to machine %s (%s): %w", s.cfg.Name, s.cfg.Endpoint, ctx.Err())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("ssh to machine %s (%s): no answer in %s (%d attempts): %w", s.cfg.Name, s.cfg.Endpoint, s.cfg.Wait, attempt, err)
		}
		if now := time.Now(); now.Sub(lastLog) >= progressEvery && now.Sub(start) >= progressEvery {
			s.cfg.Log.Infof("waiting for SSH on machine %s (%s): %s, %s so far", s.cfg.Name, s.cfg.Endpoint, firstLine(err), now.Sub(start).Round(time.Second))
			lastLog = now
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ssh to machine %s (%s): %w", s.cfg.Name, s.cfg.Endpoint, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func (s *SSH) dialOnce(ctx context.Context, conf *ssh.ClientConfig) (*ssh.Client, error) {
	d := net.Dialer{Timeout: conf.Timeout}
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	// The handshake is bounded too: a half-started sshd can accept and say nothing.
	_ = conn.SetDeadline(time.Now().Add(conf.Timeout))
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, chans, reqs, err := ssh.NewClientConn(conn, s.cfg.Endpoint, conf)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(c, chans, reqs), nil
}

func firstLine(err error) string {
	s := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// session opens a session on the connection, dialling again once when the machine dropped it.
func (s *SSH) session(ctx context.Context) (*ssh.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		sess, err := s.client.NewSession()
		if err == nil {
			return sess, nil
		}
		s.client.Close()
		s.client = nil
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	s.client = c
	sess, err := c.NewSession()
	if err != nil {
		return nil, fmt.Errorf("ssh to machine %s: open a session: %w", s.cfg.Name, err)
	}
	return sess, nil
}

func (s *SSH) name() string { return s.cfg.Name }

// command runs cmdline in a session of its own.
func (s *SSH) command(ctx context.Context, cmdline string, stdin io.Reader) ([]byte, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdin, sess.Stdout, sess.Stderr = stdin, &stdout, &stderr
	done := make(chan error, 1)
	go func() { done <- sess.Run(cmdline) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		sess.Close()
		return nil, fmt.Errorf("run a script on machine %s: %w", s.cfg.Name, ctx.Err())
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		return stdout.Bytes(), &RunError{Machine: s.cfg.Name, ExitCode: ee.ExitStatus(), Stderr: tail(stderr.Bytes())}
	}
	var em *ssh.ExitMissingError
	if errors.As(err, &em) {
		return stdout.Bytes(), &RunError{Machine: s.cfg.Name, ExitCode: -1, Stderr: tail(stderr.Bytes())}
	}
	return nil, fmt.Errorf("run a script on machine %s: %w", s.cfg.Name, err)
}

// Run runs script with `sh -e` as root (see Machine).
func (s *SSH) Run(ctx context.Context, script string, stdin io.Reader) ([]byte, error) {
	return run(ctx, s, script, stdin)
}

// WriteFile writes path on the machine atomically (see Machine).
func (s *SSH) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	return writeFile(ctx, s, path, data, mode)
}

// ReadFile reads path on the machine (see Machine).
func (s *SSH) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return readFile(ctx, s, path)
}
