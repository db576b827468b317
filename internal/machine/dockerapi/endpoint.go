// Package dockerapi is a small client of the Docker Engine API over the daemon's unix socket,
// for the questions nuv asks its container runtime often (list and inspect containers and
// networks, exec a command without standard input). Each question is one HTTP request on a
// kept-alive connection instead of a run of the docker CLI (about 0.1 s of CPU each).
//
// # Which daemon
//
// The client must talk to the daemon the docker CLI would talk to, or to none; Resolve decides
// from the environment the CLI would run with (nil: nuv's own):
//
//   - DOCKER_HOST=unix:///path: that socket.
//   - DOCKER_HOST set to anything else (tcp://, ssh://, fd://, npipe://): no endpoint; callers use
//     the CLI, which knows TLS, SSH and the rest.
//   - DOCKER_HOST unset or empty, and DOCKER_CONTEXT set to anything but "default": no endpoint
//     (a context may point anywhere; the CLI resolves it).
//   - Otherwise, when the CLI's config file ($DOCKER_CONFIG/config.json, else
//     $HOME/.docker/config.json) names a currentContext other than "default" (or cannot be
//     read as JSON): no endpoint, for the same reason.
//   - Otherwise /var/run/docker.sock, the CLI's default.
//
// DOCKER_HOST wins over DOCKER_CONTEXT and the config file, as it does for the CLI.
//
// Errors are *Error, carrying the daemon's HTTP status and message; IsNotFound says whether the
// daemon answered 404 (no such container, network or exec).
package dockerapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultSocket is the docker CLI's default daemon socket.
const DefaultSocket = "/var/run/docker.sock"

// Endpoint is where the daemon is reached, or why the CLI must be used instead.
type Endpoint struct {
	// Socket is the unix socket's path; empty when the CLI must be used.
	Socket string
	// Reason says, when Socket is empty, why (e.g. "DOCKER_HOST=tcp://... is not a unix socket").
	Reason string
}

// Resolve finds the endpoint the docker CLI would use with environment env (nil: os.Environ()),
// as the package doc says. readFile reads the CLI's config file (nil: os.ReadFile).
func Resolve(env []string, readFile func(string) ([]byte, error)) Endpoint {
	if env == nil {
		env = os.Environ()
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	get := func(k string) string { // the last one wins, as with exec.Cmd's Env
		v := ""
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				v = kv[len(k)+1:]
			}
		}
		return v
	}
	if h := get("DOCKER_HOST"); h != "" {
		if p, ok := strings.CutPrefix(h, "unix://"); ok && p != "" {
			return Endpoint{Socket: p}
		}
		return Endpoint{Reason: fmt.Sprintf("DOCKER_HOST=%s is not a unix:// socket", h)}
	}
	if c := get("DOCKER_CONTEXT"); c != "" && c != "default" {
		return Endpoint{Reason: fmt.Sprintf("DOCKER_CONTEXT=%s names a context", c)}
	}
	dir := get("DOCKER_CONFIG")
	if dir == "" {
		home := get("HOME")
		if home == "" {
			return Endpoint{Socket: DefaultSocket}
		}
		dir = filepath.Join(home, ".docker")
	}
	file := filepath.Join(dir, "config.json")
	b, err := readFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return Endpoint{Socket: DefaultSocket}
	}
	if err != nil {
		return Endpoint{Reason: fmt.Sprintf("the docker CLI's config %s: %v", file, err)}
	}
	var cfg struct {
		CurrentContext string `json:"currentContext"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return Endpoint{Reason: fmt.Sprintf("the docker CLI's config %s is not JSON: %v", file, err)}
	}
	if cfg.CurrentContext != "" && cfg.CurrentContext != "default" {
		return Endpoint{Reason: fmt.Sprintf("the docker CLI's config %s names context %s", file, cfg.CurrentContext)}
	}
	return Endpoint{Socket: DefaultSocket}
}
