package proc

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// LaunchReady launches c (see Launch) and waits until ready says the new process serves, checking
// every 50ms for at most timeout (default 15s). what names the program in errors ("the registry").
// A process that exits first, or does not get ready in time (it is then killed), is an error that
// points at its log and quotes the log's last lines.
func LaunchReady(ctx context.Context, c Command, what string, timeout time.Duration, ready func(ctx context.Context, p Process) bool) (Process, error) {
	p, err := Launch(c)
	if err != nil {
		return Process{}, fmt.Errorf("start %s: %w", what, err)
	}
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.Exited:
			return Process{}, fmt.Errorf("%s exited at start (%v); see %s:\n%s", what, err, c.Log, LogTail(c.Log, 10))
		case <-ctx.Done():
			_ = p.Kill()
			return Process{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if ready(ctx, p) {
			return p, nil
		}
	}
	_ = p.Kill()
	return Process{}, fmt.Errorf("%s did not answer within %s; see %s", what, timeout, c.Log)
}

// LogTail returns the last n lines of a log file ("" if it cannot be read).
func LogTail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LoopbackAddr is 127.0.0.1:port for a server nuv is about to start; a port another program holds
// is an error that names envVar, the setting that picks another one. Port 0 (any free port) is
// always available.
func LoopbackAddr(port int, envVar string) (string, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if port == 0 {
		return addr, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("port %d on 127.0.0.1 is taken by another program (set %s to another port): %w", port, envVar, err)
	}
	ln.Close()
	return addr, nil
}
