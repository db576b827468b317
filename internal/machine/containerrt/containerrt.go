// Package containerrt finds the container runtime on this machine (docker, nerdctl or podman, as
// kind's own detection does) and runs its command-line program: kind clusters, the node images nuv
// assembles, the registry relay and the AWS emulator's machines and load balancers all use the
// runtime it finds.
package containerrt

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/runner"
)

// Runtime is the container runtime kind nodes (and nuv's machines) run in, as found on this machine.
type Runtime struct {
	// Name is docker, podman or nerdctl.
	Name string
	// Path is the runtime's command-line program.
	Path string
	// Endpoint is where its daemon was reached (DOCKER_HOST, CONTAINER_HOST or the default).
	Endpoint string
	// Version is the daemon's (server's) version.
	Version string
}

// runtimeNames are the runtimes kind supports, in the order kind's own detection tries them.
var runtimeNames = []string{"docker", "nerdctl", "podman"}

// ErrNoRuntime is wrapped by Detect's errors: no usable container runtime.
var ErrNoRuntime = errors.New("no container runtime for kind clusters")

// endpointVar is the environment variable that points the runtime's client at its daemon.
func endpointVar(name string) string {
	switch name {
	case "podman":
		return "CONTAINER_HOST"
	case "nerdctl":
		return "CONTAINERD_ADDRESS"
	}
	return "DOCKER_HOST"
}

// Detect finds the container runtime kind clusters use: the one KIND_EXPERIMENTAL_PROVIDER
// names (as the kind CLI honours it), else the first of docker, nerdctl and podman whose program is
// on PATH and whose daemon answers. The runtime's own client settings apply (DOCKER_HOST,
// CONTAINER_HOST, ...): the kind library runs the same programs with nuv's environment.
// The error wraps ErrNoRuntime and names what was looked for and how to install a runtime.
func Detect(ctx context.Context, getenv func(string) string) (Runtime, error) {
	names := runtimeNames
	forced := getenv("KIND_EXPERIMENTAL_PROVIDER")
	if forced != "" {
		ok := false
		for _, n := range runtimeNames {
			ok = ok || n == forced
		}
		if !ok {
			return Runtime{}, fmt.Errorf("%w: KIND_EXPERIMENTAL_PROVIDER=%q is not one of %s", ErrNoRuntime, forced, strings.Join(runtimeNames, ", "))
		}
		names = []string{forced}
	}
	var problems []string
	for _, n := range names {
		path, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		rt := Runtime{Name: n, Path: path, Endpoint: getenv(endpointVar(n))}
		v, err := probe(ctx, rt)
		if err != nil {
			where := "its default socket"
			if rt.Endpoint != "" {
				where = endpointVar(n) + "=" + rt.Endpoint
			}
			problems = append(problems, fmt.Sprintf("%s (%s) is installed but its daemon does not answer at %s: %s", n, path, where, FirstLine(err)))
			continue
		}
		rt.Version = v
		return rt, nil
	}
	looked := strings.Join(names, ", ")
	if forced != "" {
		looked += " (KIND_EXPERIMENTAL_PROVIDER=" + forced + ")"
	}
	if len(problems) > 0 {
		return Runtime{}, fmt.Errorf("%w: %s; start it (`systemctl start docker` or `dockerd`) or point %s at a running daemon",
			ErrNoRuntime, strings.Join(problems, "; "), endpointVar(names[0]))
	}
	return Runtime{}, fmt.Errorf("%w: looked for %s on PATH and found none; install one, e.g. `apt-get install docker.io` (Debian, Ubuntu), then start it (`systemctl start docker`)",
		ErrNoRuntime, looked)
}

// probe asks the runtime's daemon for its version (bounded: a daemon that hangs is not usable).
func probe(ctx context.Context, rt Runtime) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// `version` asks the daemon for its version alone; `info` also gathers storage, plugins and,
	// for podman, the package of every helper (dpkg queries): 0.1 s against 0.7-1 s here.
	var args []string
	switch rt.Name {
	case "docker":
		args = []string{"version", "--format", "{{.Server.Version}}"}
	case "podman": // daemonless: the client is the engine
		args = []string{"version", "--format", "{{.Client.Version}}"}
	default: // nerdctl's version has no single server version
		args = []string{"info", "--format", "{{.ServerVersion}}"}
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: rt.Path, Args: args})
	if err != nil {
		var re *runner.RunError
		if errors.As(err, &re) && len(strings.TrimSpace(string(re.Stderr))) > 0 {
			return "", errors.New(strings.TrimSpace(string(re.Stderr)))
		}
		return "", err
	}
	v := strings.TrimSpace(string(out))
	if v == "" || v == "<no value>" {
		return "", fmt.Errorf("`%s version` reported no server version", rt.Name)
	}
	return v, nil
}

// FirstLine is the first line of err's message: the cause a runtime's program printed, without what follows.
func FirstLine(err error) string {
	s := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Output runs the runtime's program with args and returns its standard output.
func (r Runtime) Output(ctx context.Context, args ...string) (string, error) {
	out, err := runner.Output(ctx, runner.Cmd{Path: r.Path, Args: args})
	return string(out), err
}

// PsLabel is the `ps --format` expression of container label key: docker and nerdctl have a
// Label method, podman a Labels map.
func (r Runtime) PsLabel(key string) string {
	if r.Name == "podman" {
		return `{{index .Labels "` + key + `"}}`
	}
	return `{{.Label "` + key + `"}}`
}

// createdLayouts are the ways the runtimes print a container's creation time in `inspect`
// templates: docker and nerdctl RFC 3339, podman Go's time.Time default.
var createdLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999 -0700 MST"}

// ParseCreated reads the creation time `inspect --format {{.Created}}` printed.
func ParseCreated(s string) (time.Time, bool) {
	for _, l := range createdLayouts {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// NetworkIdle reports whether network exists and no container is attached to it (running or
// stopped): docker's network inspect counts the running ones, podman's has no such field, and
// `ps -a --filter network=` finds the stopped ones of both.
func (r Runtime) NetworkIdle(ctx context.Context, network string) bool {
	if r.Name == "podman" {
		if _, err := r.Output(ctx, "network", "inspect", network); err != nil {
			return false
		}
	} else {
		out, err := r.Output(ctx, "network", "inspect", "--format", "{{len .Containers}}", network)
		if err != nil || strings.TrimSpace(out) != "0" {
			return false
		}
	}
	others, err := r.Output(ctx, "ps", "-a", "--filter", "network="+network, "--format", "{{.Names}}")
	return err == nil && strings.TrimSpace(others) == ""
}
