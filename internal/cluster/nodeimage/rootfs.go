package nodeimage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
	"github.com/nuv-dev/nuv/internal/runner"
)

// Packages are the Debian packages of the node's root file system: those of kind's base image
// (images/base/Dockerfile of the kind module) that Debian has, plus containerd, runc and the CNI
// plugins, which kind builds from source and Debian ships; and what a machine of a self-managed
// cluster needs beside them (nuv reaches machines over SSH, and a load-balancer machine runs
// HAProxy). Neither service starts unless a machine's user data enables it: kind nodes never do.
var Packages = []string{
	"systemd", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux", "mount", "kmod",
	"libseccomp2", "pigz", "fuse-overlayfs", "e2fsprogs", "bash", "ca-certificates", "curl", "jq", "procps",
	"socat", "containerd", "runc", "containernetworking-plugins", "openssh-server", "haproxy",
}

// Debian says which Debian release and mirror the root file system comes from.
type Debian struct {
	Suite  string // e.g. bookworm
	Mirror string // e.g. http://deb.debian.org/debian
}

// HostDebian reads the suite from /etc/os-release (VERSION_CODENAME) and the mirror from the
// host's apt sources (the first deb822 URIs or sources.list line serving that suite), unless
// $NUV_DEBIAN_MIRROR and $NUV_DEBIAN_SUITE say otherwise.
func HostDebian(getenv func(string) string, etc string) (Debian, error) {
	d := Debian{Suite: getenv("NUV_DEBIAN_SUITE"), Mirror: getenv("NUV_DEBIAN_MIRROR")}
	if d.Suite == "" {
		b, err := os.ReadFile(filepath.Join(etc, "os-release"))
		if err != nil {
			return d, fmt.Errorf("which Debian release to build the node from: %w (set NUV_DEBIAN_SUITE, e.g. bookworm)", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VERSION_CODENAME="); ok {
				d.Suite = strings.Trim(v, `"`)
			}
		}
		if d.Suite == "" {
			return d, fmt.Errorf("%s has no VERSION_CODENAME: set NUV_DEBIAN_SUITE (e.g. bookworm) and NUV_DEBIAN_MIRROR", filepath.Join(etc, "os-release"))
		}
	}
	if d.Mirror == "" {
		d.Mirror = aptMirror(etc, d.Suite)
		if d.Mirror == "" {
			return d, fmt.Errorf("no apt source in %s serves Debian %s: set NUV_DEBIAN_MIRROR (e.g. http://deb.debian.org/debian)", filepath.Join(etc, "apt"), d.Suite)
		}
	}
	return d, nil
}

// aptMirror finds the URI of the apt source serving suite (deb822 .sources files first, then the
// one-line format).
func aptMirror(etc, suite string) string {
	files, _ := filepath.Glob(filepath.Join(etc, "apt", "sources.list.d", "*.sources"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, stanza := range strings.Split(string(b), "\n\n") {
			var uris, suites []string
			deb := false
			for _, l := range strings.Split(stanza, "\n") {
				k, v, ok := strings.Cut(l, ":")
				if !ok || strings.HasPrefix(l, "#") {
					continue
				}
				switch strings.TrimSpace(k) {
				case "Types":
					deb = contains(strings.Fields(v), "deb")
				case "URIs":
					uris = strings.Fields(v)
				case "Suites":
					suites = strings.Fields(v)
				}
			}
			if deb && len(uris) > 0 && contains(suites, suite) {
				return uris[0]
			}
		}
	}
	lists := append([]string{filepath.Join(etc, "apt", "sources.list")}, globOr(filepath.Join(etc, "apt", "sources.list.d", "*.list"))...)
	for _, f := range lists {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			fs := strings.Fields(l)
			if len(fs) >= 3 && fs[0] == "deb" {
				i := 1
				if strings.HasPrefix(fs[1], "[") { // options
					for i < len(fs) && !strings.HasSuffix(fs[i], "]") {
						i++
					}
					i++
				}
				if i+1 < len(fs) && fs[i+1] == suite {
					return fs[i]
				}
			}
		}
	}
	return ""
}

func globOr(p string) []string { m, _ := filepath.Glob(p); return m }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// rootfsKey is the cache key of the root file system layer.
func rootfsKey(d Debian, arch string) string {
	return buildcache.Key("rootfs", d.Suite, d.Mirror, arch, strings.Join(Packages, ","), rootfsRecipe)
}

// rootfsRecipe names the edits buildRootfs makes after debootstrap; change it with them.
const rootfsRecipe = "kind-base-cleanup-v2"

// buildRootfs runs debootstrap into a new directory and makes the root file system layer
// (rootfs.tar) in dir.
func (b *builder) buildRootfs(ctx context.Context, dir string, d Debian) ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("debootstrap needs root: run the node-image build as root")
	}
	deboot, err := debootstrapPath()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "root")
	if err := debootstrap(ctx, b.log, deboot, root, d, Packages, nil); err != nil {
		return nil, err
	}
	if err := kindBaseCleanup(root); err != nil {
		return nil, err
	}
	tarPath := filepath.Join(dir, "rootfs.tar")
	// the kernel's and docker's own mounts are not part of an image
	if err := runner.Run(ctx, runner.Cmd{Path: "tar", Args: []string{"--numeric-owner", "--xattrs", "--sort=name",
		"--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "--exclude=./run/*", "--exclude=./tmp/*",
		"--exclude=./var/cache/apt/archives/*.deb", "--exclude=./var/lib/apt/lists/*", "--exclude=./var/log/*",
		"-C", root, "-cf", tarPath, "."}}); err != nil {
		return nil, fmt.Errorf("pack the root file system: %w", err)
	}
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	return []string{"rootfs.tar"}, nil
}

func debootstrapPath() (string, error) {
	deboot, err := lookPath("debootstrap")
	if err != nil {
		return "", fmt.Errorf("debootstrap is not installed (apt-get install debootstrap): %w", err)
	}
	return deboot, nil
}

// Debootstrap makes a minimal (minbase) Debian root file system of d in root, with packages and
// their dependencies, printing progress to log every 15 s. extra are further debootstrap options
// (e.g. --cache-dir=DIR, where debootstrap keeps the .debs it downloads). It needs root.
func Debootstrap(ctx context.Context, log cli.Logger, root string, d Debian, packages []string, extra []string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("debootstrap needs root: run the image build as root")
	}
	deboot, err := debootstrapPath()
	if err != nil {
		return err
	}
	if log == nil {
		log = cli.Quiet()
	}
	return debootstrap(ctx, log, deboot, root, d, packages, extra)
}

func debootstrap(ctx context.Context, log cli.Logger, deboot, root string, d Debian, packages, extra []string) error {
	args := append([]string{"--variant=minbase", "--include=" + strings.Join(packages, ","), "--components=main"}, extra...)
	args = append(args, d.Suite, root, d.Mirror)
	log.Infof("  debootstrap %s from %s (%d packages and their dependencies)", d.Suite, d.Mirror, len(packages))
	return runProgress(ctx, log, "debootstrap", runner.Cmd{Path: deboot, Args: args, Env: append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")})
}

// kindBaseCleanup makes the edits of kind's base image that remove files (so that they need no
// whiteouts in the node layer): no units started by default but those the node enables, journald
// not reading kmsg, systemd as /sbin/init.
func kindBaseCleanup(root string) error {
	rm := func(pattern string) error {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, p := range m {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range []string{
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"lib/systemd/system/multi-user.target.wants/*",
		"etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*",
		"lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*",
		"lib/systemd/system/basic.target.wants/*",
		// openssh-server's install made host keys: every machine of the image would share them.
		// A machine gets its own from its user data (nuv makes them and pins them).
		"etc/ssh/ssh_host_*",
	} {
		if err := rm(p); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(root, "etc/systemd/journald.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("ReadKMsg=no\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	initPath := filepath.Join(root, "sbin/init")
	if _, err := os.Lstat(initPath); err != nil {
		if err := os.Symlink("/usr/lib/systemd/systemd", initPath); err != nil {
			return err
		}
	}
	return nil
}

// runProgress runs a long program, printing every 15 s how long it has run and its last line.
func (b *builder) runProgress(ctx context.Context, label string, cmd runner.Cmd) error {
	return runProgress(ctx, b.log, label, cmd)
}

// RunProgress runs a long program, printing to log every 15 s how long it has run and its last
// line of output; an error carries that last line.
func RunProgress(ctx context.Context, log cli.Logger, label string, cmd runner.Cmd) error {
	return runProgress(ctx, log, label, cmd)
}

func runProgress(ctx context.Context, log cli.Logger, label string, cmd runner.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = w, w
	var last atomic.Value
	last.Store("")
	var lines atomic.Int64
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines.Add(1)
			last.Store(sc.Text())
		}
		close(done)
	}()
	start := time.Now()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	errc := make(chan error, 1)
	go func() { errc <- runner.Run(ctx, cmd); w.Close() }()
	for {
		select {
		case <-tick.C:
			log.Infof("  %s: %s, %s", label, time.Since(start).Round(time.Second), last.Load())
		case err := <-errc:
			<-done
			r.Close()
			if err != nil {
				return fmt.Errorf("%s: %w (last output: %s)", label, err, last.Load())
			}
			return nil
		}
	}
}
