package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/runner"
)

// importImages loads the docker-archive imagesTar into a containerd content store, as the node's
// containerd will find it under /var/lib/containerd (namespace k8s.io, unpacked for overlayfs), and
// packs that directory into outTar (paths var/lib/containerd/...). It runs this host's containerd
// (Debian's, the same release as the node's) on a root of its own and a socket of its own, and
// returns the image references it holds.
func (b *builder) importImages(ctx context.Context, work, imagesTar, outTar string) ([]string, error) {
	containerd, err := lookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("containerd (Debian's containerd package, installed with docker.io) is needed to pre-load the node's images: %w", err)
	}
	ctr, err := lookPath("ctr")
	if err != nil {
		return nil, fmt.Errorf("ctr (Debian's containerd package) is needed to pre-load the node's images: %w", err)
	}
	root := filepath.Join(work, "var", "lib", "containerd")
	if err := os.MkdirAll(root, 0o711); err != nil {
		return nil, err
	}
	// a unix socket path must be short: keep the state in /run (or /tmp)
	stateParent := "/run"
	if st, err := os.Stat(stateParent); err != nil || !st.IsDir() {
		stateParent = os.TempDir()
	}
	state, err := os.MkdirTemp(stateParent, "nuv-ctrd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(state)
	sock := filepath.Join(state, "c.sock")
	cfg := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = %q
[metrics]
  address = ""
`, root, filepath.Join(state, "s"), sock, sock+".ttrpc", sock+".debug")
	cfgPath := filepath.Join(state, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(work, "containerd.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	proc, err := runner.Start(ctx, runner.Cmd{Path: containerd, Args: []string{"--config", cfgPath}, Stdout: logf, Stderr: logf, Group: true})
	if err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = proc.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = proc.Signal(syscall.SIGKILL)
			<-exited
		}
	}
	defer stop()
	c := func(args ...string) runner.Cmd {
		return runner.Cmd{Path: ctr, Args: append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := runner.Run(ctx, c("version")); err == nil {
			break
		}
		select {
		case err := <-exited:
			stopped = true
			log, _ := os.ReadFile(filepath.Join(work, "containerd.log"))
			return nil, fmt.Errorf("containerd for the image import exited (%v): %s", err, tail(string(log), 1500))
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("containerd for the image import did not answer on %s in 60 s", sock)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if err := runner.Run(ctx, c("images", "import", "--all-platforms", imagesTar)); err != nil {
		return nil, fmt.Errorf("ctr images import: %w", err)
	}
	out, err := runner.Output(ctx, c("images", "ls", "-q"))
	if err != nil {
		return nil, err
	}
	stop()
	if err := os.Remove(filepath.Join(work, "containerd.log")); err != nil {
		return nil, err
	}
	if err := runner.Run(ctx, runner.Cmd{Path: "tar", Args: []string{"--numeric-owner", "--xattrs", "--sort=name", "-C", work, "-cf", outTar, "var"}}); err != nil {
		return nil, fmt.Errorf("pack the node's containerd store: %w", err)
	}
	return strings.Fields(string(out)), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
