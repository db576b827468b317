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
	root := filepath.Join(work, "var", "lib", "containerd")
	if err := os.MkdirAll(root, 0o711); err != nil {
		return nil, err
	}
	cd, err := startContainerd(ctx, root, filepath.Join(work, "containerd.log"))
	if err != nil {
		return nil, err
	}
	defer cd.stop()
	if err := runner.Run(ctx, cd.ctr("images", "import", "--all-platforms", imagesTar)); err != nil {
		return nil, fmt.Errorf("ctr images import: %w", err)
	}
	refs, err := cd.images(ctx)
	if err != nil {
		return nil, err
	}
	cd.stop()
	if err := os.Remove(filepath.Join(work, "containerd.log")); err != nil {
		return nil, err
	}
	if err := runner.Run(ctx, runner.Cmd{Path: "tar", Args: []string{"--numeric-owner", "--xattrs", "--sort=name", "-C", work, "-cf", outTar, "var"}}); err != nil {
		return nil, fmt.Errorf("pack the node's containerd store: %w", err)
	}
	return refs, nil
}

// containerdProc is a containerd of nuv's own over a given root (a node's /var/lib/containerd).
type containerdProc struct {
	sock, ctrBin string
	stop         func()
}

func (c *containerdProc) ctr(args ...string) runner.Cmd {
	return runner.Cmd{Path: c.ctrBin, Args: append([]string{"--address", c.sock, "--namespace", "k8s.io"}, args...)}
}

// images lists the image references of the store's k8s.io namespace.
func (c *containerdProc) images(ctx context.Context) ([]string, error) {
	out, err := runner.Output(ctx, c.ctr("images", "ls", "-q"))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// startContainerd runs this host's containerd (Debian's, the node's release) on root with a socket
// and state of its own, CRI disabled, logging to logPath, and waits until it answers.
func startContainerd(ctx context.Context, root, logPath string) (*containerdProc, error) {
	containerd, err := lookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("containerd (Debian's containerd package, installed with docker.io) is needed to pre-load the node's images: %w", err)
	}
	ctrBin, err := lookPath("ctr")
	if err != nil {
		return nil, fmt.Errorf("ctr (Debian's containerd package) is needed to pre-load the node's images: %w", err)
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
		os.RemoveAll(state)
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(state)
		return nil, err
	}
	proc, err := runner.Start(ctx, runner.Cmd{Path: containerd, Args: []string{"--config", cfgPath}, Stdout: logf, Stderr: logf, Group: true})
	if err != nil {
		logf.Close()
		os.RemoveAll(state)
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	stopped := false
	c := &containerdProc{sock: sock, ctrBin: ctrBin}
	c.stop = func() {
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
		logf.Close()
		os.RemoveAll(state)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := runner.Run(ctx, c.ctr("version")); err == nil {
			return c, nil
		}
		select {
		case err := <-exited:
			stopped = true
			logf.Close()
			os.RemoveAll(state)
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("containerd on %s exited (%v): %s", root, err, tail(string(log), 1500))
		default:
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("containerd on %s did not answer on %s in 60 s", root, sock)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
