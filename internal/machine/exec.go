package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
)

// Exec is a Machine that is a container, reached with its runtime's `exec -i` (docker, podman,
// nerdctl): for tests, and for the emulator's machines, which are containers.
type Exec struct {
	// Runtime is the path of the container runtime's program (e.g. /usr/bin/docker); its own
	// client settings (DOCKER_HOST, ...) come from Env.
	Runtime string
	// Env is the runtime program's whole environment (nil: nuv's own).
	Env []string
	// Container is the container's name, IP its private address.
	Container, IP string
}

var _ Machine = (*Exec)(nil)

// Name is the container's name.
func (e *Exec) Name() string { return e.Container }

// Address is the container's private address.
func (e *Exec) Address() string { return e.IP }

func (e *Exec) name() string { return e.Container }

// command runs cmdline with `RUNTIME exec -i CONTAINER sh -c`.
func (e *Exec) command(ctx context.Context, cmdline string, stdin io.Reader) ([]byte, error) {
	cmd := exec.CommandContext(ctx, e.Runtime, "exec", "-i", e.Container, "sh", "-c", cmdline)
	cmd.Env = e.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("run a script on machine %s: %w", e.Container, ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// The runtime's own failures (no such container, 125-127 from docker exec) come the same
		// way as the script's: the stderr tail says which.
		return stdout.Bytes(), &RunError{Machine: e.Container, ExitCode: ee.ExitCode(), Stderr: tail(stderr.Bytes())}
	}
	return nil, fmt.Errorf("run a script on machine %s with %s exec: %w", e.Container, e.Runtime, err)
}

// Run runs script with `sh -e` as root (see Machine).
func (e *Exec) Run(ctx context.Context, script string, stdin io.Reader) ([]byte, error) {
	return run(ctx, e, script, stdin)
}

// WriteFile writes path in the container atomically (see Machine).
func (e *Exec) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	return writeFile(ctx, e, path, data, mode)
}

// ReadFile reads path in the container (see Machine).
func (e *Exec) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return readFile(ctx, e, path)
}
