package whiskapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// redisClient is a minimal client of Redis's protocol (RESP2): it sends commands as arrays of bulk
// strings, pipelined on one connection, and reads the replies (simple strings, errors, integers,
// bulk strings, arrays). One connection is kept and redialled after any error.
type redisClient struct {
	addr    string
	timeout time.Duration
	// password is sent with AUTH on each new connection (Redis's requirepass); empty: none.
	password string

	mu   sync.Mutex
	conn net.Conn
	rd   *bufio.Reader
}

// auth authenticates the new connection with the password; the error never holds it.
func (c *redisClient) auth() error {
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c.conn, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(c.password), c.password); err != nil {
		return fmt.Errorf("redis %s: %w", c.addr, err)
	}
	v, err := readReply(c.rd)
	if err != nil {
		return fmt.Errorf("redis %s: AUTH: %w", c.addr, err)
	}
	if e, ok := v.(redisError); ok {
		return fmt.Errorf("redis %s: AUTH refused (%s): check %s", c.addr, e, EnvRedisPassword)
	}
	return nil
}

// redisError is an error reply of the server ("-ERR ...").
type redisError string

func (e redisError) Error() string { return "redis: " + string(e) }

func newRedisClient(addr string) *redisClient {
	return &redisClient{addr: addr, timeout: 3 * time.Second}
}

// do sends the commands in one write and returns their replies in order. A connection error
// closes the connection (the next call dials again); an error reply is returned as a redisError
// in place of that command's reply.
func (c *redisClient) do(ctx context.Context, cmds ...[]string) ([]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	replies, err := c.roundTrip(ctx, cmds)
	if err != nil && c.conn != nil {
		c.conn.Close()
		c.conn, c.rd = nil, nil
	}
	return replies, err
}

func (c *redisClient) roundTrip(ctx context.Context, cmds [][]string) ([]any, error) {
	if c.conn == nil {
		d := net.Dialer{Timeout: c.timeout}
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, fmt.Errorf("redis %s: %w", c.addr, err)
		}
		c.conn, c.rd = conn, bufio.NewReader(conn)
		if c.password != "" {
			if err := c.auth(); err != nil {
				return nil, err
			}
		}
	}
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, cmd := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(cmd))
		for _, a := range cmd {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := io.WriteString(c.conn, b.String()); err != nil {
		return nil, fmt.Errorf("redis %s: %w", c.addr, err)
	}
	out := make([]any, len(cmds))
	for i := range cmds {
		v, err := readReply(c.rd)
		if err != nil {
			return nil, fmt.Errorf("redis %s: %w", c.addr, err)
		}
		out[i] = v
	}
	return out, nil
}

// maxBulk bounds the size of a bulk reply this client accepts.
const maxBulk = 1 << 20

// readReply reads one RESP2 reply: string, redisError, int64, []byte (nil for a null bulk string),
// []any.
func readReply(rd *bufio.Reader) (any, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("malformed reply %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return redisError(body), nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("malformed integer reply %q", body)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulk {
			return nil, fmt.Errorf("malformed bulk length %q", body)
		}
		if n == -1 {
			return []byte(nil), nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return buf[:n], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > 1<<16 {
			return nil, fmt.Errorf("malformed array length %q", body)
		}
		if n == -1 {
			return []any(nil), nil
		}
		arr := make([]any, n)
		for i := range arr {
			if arr[i], err = readReply(rd); err != nil {
				return nil, err
			}
		}
		return arr, nil
	}
	return nil, fmt.Errorf("unknown reply type %q", kind)
}

// ping checks that the server answers PONG.
func (c *redisClient) ping(ctx context.Context) error {
	r, err := c.do(ctx, []string{"PING"})
	if err != nil {
		return err
	}
	if r[0] != "PONG" {
		return fmt.Errorf("redis %s: PING answered %v", c.addr, r[0])
	}
	return nil
}

// incrWindow increments key and (re)sets its expiry, in one round trip, and returns the count.
func (c *redisClient) incrWindow(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	r, err := c.do(ctx, []string{"INCR", key}, []string{"EXPIRE", key, strconv.Itoa(int(ttl / time.Second))})
	if err != nil {
		return 0, err
	}
	for _, v := range r {
		if e, ok := v.(redisError); ok {
			return 0, e
		}
	}
	n, ok := r[0].(int64)
	if !ok {
		return 0, errors.New("redis: INCR did not answer an integer")
	}
	return n, nil
}
