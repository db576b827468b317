package dockerapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client asks one daemon over its unix socket. It is safe for concurrent use.
type Client struct {
	socket string
	hc     *http.Client
}

// New returns a client of the daemon at unix socket path (nothing is dialled yet).
func New(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:        8,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{socket: socket, hc: &http.Client{Transport: tr}}
}

// Socket is the daemon's socket path.
func (c *Client) Socket() string { return c.socket }

// Error is the daemon's answer to a request that failed.
type Error struct {
	// Op says what was asked (e.g. "inspect container web-1").
	Op string
	// Status is the HTTP status (404: no such object; 409: conflict, e.g. a container not running).
	Status int
	// Message is the daemon's message (its JSON "message"), or the body's start.
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("docker API: %s: %s (HTTP %d)", e.Op, e.Message, e.Status)
}

// IsNotFound says whether err is the daemon's 404 (no such container, network or exec).
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// do sends one request; a status of 400 or more is an *Error. The caller closes the body.
func (c *Client) do(ctx context.Context, op, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("docker API: %s: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	u := "http://docker" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("docker API: %s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("docker API at %s: %s: %w", c.socket, op, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var m struct {
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &m) == nil && m.Message != "" {
			msg = m.Message
		}
		if len(msg) > 2048 {
			msg = msg[:2048]
		}
		return nil, &Error{Op: op, Status: resp.StatusCode, Message: msg}
	}
	return resp, nil
}

// getJSON GETs path and decodes its JSON answer into v (raw bytes when v is *[]byte).
func (c *Client) getJSON(ctx context.Context, op, path string, query url.Values, v any) error {
	resp, err := c.do(ctx, op, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("docker API: %s: read the answer: %w", op, err)
	}
	if raw, ok := v.(*[]byte); ok {
		*raw = b
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("docker API: %s: the answer: %w", op, err)
	}
	return nil
}

// Filters are the daemon's list filters: name (label, network, ...) to values, all of which must
// match (e.g. {"label": {"a=b", "c"}}).
type Filters map[string][]string

func (f Filters) query(q url.Values) (url.Values, error) {
	if len(f) == 0 {
		return q, nil
	}
	b, err := json.Marshal(map[string][]string(f))
	if err != nil {
		return nil, err
	}
	q.Set("filters", string(b))
	return q, nil
}

// Container is one container of a list.
type Container struct {
	ID     string `json:"Id"`
	Names  []string
	Labels map[string]string
	State  string
}

// Name is the container's name without the daemon's leading '/'.
func (c Container) Name() string {
	if len(c.Names) == 0 {
		return ""
	}
	return strings.TrimPrefix(c.Names[0], "/")
}

// Containers lists the containers, stopped ones too, that match filters.
func (c *Client) Containers(ctx context.Context, filters Filters) ([]Container, error) {
	q, err := filters.query(url.Values{"all": {"1"}})
	if err != nil {
		return nil, fmt.Errorf("docker API: list containers: %w", err)
	}
	var out []Container
	if err := c.getJSON(ctx, "list containers", "/containers/json", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// InspectContainer returns the daemon's inspect document of container name (name or ID): the
// same JSON object `docker inspect` prints one of. A missing one is an *Error with IsNotFound.
func (c *Client) InspectContainer(ctx context.Context, name string) ([]byte, error) {
	var raw []byte
	if err := c.getJSON(ctx, "inspect container "+name, "/containers/"+url.PathEscape(name)+"/json", nil, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Network is what the daemon says of a network (the fields nuv reads).
type Network struct {
	ID      string `json:"Id"`
	Name    string
	Labels  map[string]string
	Options map[string]string
	IPAM    struct {
		Config []struct {
			Subnet  string
			Gateway string
		}
	}
	// Containers is filled by InspectNetwork only.
	Containers map[string]struct{ Name string }
}

// Networks lists the networks that match filters.
func (c *Client) Networks(ctx context.Context, filters Filters) ([]Network, error) {
	q, err := filters.query(url.Values{})
	if err != nil {
		return nil, fmt.Errorf("docker API: list networks: %w", err)
	}
	var out []Network
	if err := c.getJSON(ctx, "list networks", "/networks", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// InspectNetwork returns network name (name or ID); a missing one is an *Error with IsNotFound.
func (c *Client) InspectNetwork(ctx context.Context, name string) (Network, error) {
	var n Network
	err := c.getJSON(ctx, "inspect network "+name, "/networks/"+url.PathEscape(name), nil, &n)
	return n, err
}

// ExecResult is what a command run in a container printed and how it exited.
type ExecResult struct {
	Stdout, Stderr []byte
	// ExitCode is the command's exit status (126/127: it could not be run, as the CLI says).
	ExitCode int
}

// Exec runs cmd in running container name as its default user, without standard input and
// without a TTY, and waits for it to end. A non-zero exit is not an error: see ExitCode. An error
// is the daemon's (no such container: IsNotFound; a container not running: HTTP 409) or the
// connection's.
func (c *Client) Exec(ctx context.Context, name string, cmd []string) (ExecResult, error) {
	op := fmt.Sprintf("exec in container %s", name)
	resp, err := c.do(ctx, op, http.MethodPost, "/containers/"+url.PathEscape(name)+"/exec", nil,
		map[string]any{"AttachStdout": true, "AttachStderr": true, "Cmd": cmd})
	if err != nil {
		return ExecResult{}, err
	}
	var created struct {
		ID string `json:"Id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || created.ID == "" {
		return ExecResult{}, fmt.Errorf("docker API: %s: no exec ID in the answer (%v)", op, err)
	}
	// Without an Upgrade header the daemon still takes the connection over: the answer's body is
	// the multiplexed stream until the command ends and the daemon closes the connection.
	resp, err = c.do(ctx, op, http.MethodPost, "/exec/"+created.ID+"/start", nil, map[string]any{"Detach": false, "Tty": false})
	if err != nil {
		return ExecResult{}, err
	}
	var stdout, stderr bytes.Buffer
	err = Demux(resp.Body, &stdout, &stderr)
	resp.Body.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return ExecResult{}, fmt.Errorf("docker API: %s: its output: %w", op, err)
	}
	res := ExecResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var st struct {
		Running  bool
		ExitCode int
	}
	// The stream ends when the process does; its exit status follows a moment later.
	for i := 0; ; i++ {
		if err := c.getJSON(ctx, op+": its exit status", "/exec/"+created.ID+"/json", nil, &st); err != nil {
			return res, err
		}
		if !st.Running {
			break
		}
		if i == 100 {
			return res, fmt.Errorf("docker API: %s: the command's output ended but it still runs after 5 s", op)
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("docker API: %s: %w", op, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	res.ExitCode = st.ExitCode
	return res, nil
}
