// Command image is the benchmark of nuv's daemonless release build: `nuv image push` (cross-compile
// the operator for linux/amd64 and linux/arm64, assemble the OCI index with go-containerregistry,
// push it) against `ko build` of the same main package, for the same platforms, to the same
// registry, in one run, with the same compiler and link flags (-trimpath -buildvcs=false, -ldflags
// "-s -w -buildid= -X main.version=TAG": nuv's own, given to ko through .ko.yaml). It prints both
// medians and the ratio nuv/ko (target <= 1.0) for warm pushes (the repository already holds every
// layer: only the index and manifests move) and for cold ones (a fresh repository per run, so every
// layer of the tool's own image is uploaded; ko's base image layers are mounted from the base
// repository, which favours ko).
//
// Run from the repository root:
//
//	go run ./bench/image [-runs 5] [-nuv path/to/nuv] [-ko path/to/ko] [-main ./operator/cmd/whisk-operator]
//
// It needs Debian's docker-registry (apt-get install docker-registry); without it, it uses nuv's own
// loopback registry. ko is installed from the Go module proxy into a temporary GOBIN
// (`go install github.com/google/ko@v0.19.1`) unless -ko names one. ko's base image is built by
// this benchmark (CA certificates and users, no binary) and pushed to the same registry
// (KO_DEFAULTBASEIMAGE), since no image can be pulled from the internet here. Both tools get a
// warm-up run first (Go build cache warm, layers present), then the runs alternate.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
)

// KoVersion is the ko release the benchmark installs.
const KoVersion = "v0.19.1"

func main() {
	runs := flag.Int("runs", 5, "timed runs per tool")
	nuvBin := flag.String("nuv", "", "prebuilt nuv binary (default: build ./nuv)")
	koBin := flag.String("ko", "", "prebuilt ko binary (default: go install github.com/google/ko@"+KoVersion+")")
	mainPkg := flag.String("main", "./operator/cmd/whisk-operator", "main package both tools build")
	flag.Parse()
	if err := run(*runs, *nuvBin, *koBin, *mainPkg); err != nil {
		fmt.Fprintln(os.Stderr, "bench/image:", err)
		os.Exit(1)
	}
}

func run(runs int, nuvBin, koBin, mainPkg string) error {
	ctx := context.Background()
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	tmp, err := os.MkdirTemp("", "nuv-bench-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if nuvBin, koBin, err = tools(tmp, nuvBin, koBin); err != nil {
		return err
	}

	// both tools build the committed tree (HEAD), so edits in progress in the checkout neither
	// break nor skew the run
	src := filepath.Join(tmp, "src")
	if err := exportHEAD(root, src); err != nil {
		return err
	}
	fmt.Println("building the committed tree:", gitHead(root))

	host, stop, err := startRegistry(ctx, tmp, nuvBin)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Println("registry:", host)

	base := host + "/bench/base:latest"
	if err := pushBase(base); err != nil {
		return fmt.Errorf("push ko's base image: %w", err)
	}
	b := &builders{tmp: tmp, src: src, host: host, base: base, mainPkg: mainPkg, nuvBin: nuvBin, koBin: koBin,
		// an empty docker config for both (no credentials needed); HOME stays, so both share the
		// user's Go module and build caches
		common: append(os.Environ(), "DOCKER_CONFIG="+filepath.Join(tmp, "docker"))}
	if err := b.writeKoConfig(); err != nil {
		return err
	}
	if err := b.warmUp(); err != nil {
		return err
	}
	wn, wk, err := b.measure(runs, "warm", func(int) string { return "warm" })
	if err != nil {
		return err
	}
	cn, ck, err := b.measure(runs, "cold", func(i int) string { return fmt.Sprintf("cold%d", i) })
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Printf("build+push linux/amd64+linux/arm64 of %s to %s (%d runs each, same link flags)\n", mainPkg, host, runs)
	fmt.Println("| push | nuv image push | ko build | ratio nuv/ko (target <= 1.0) |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| warm (layers present) | %s | %s | %.2f |\n", wn.Round(time.Millisecond), wk.Round(time.Millisecond), float64(wn)/float64(wk))
	fmt.Printf("| cold (fresh repository) | %s | %s | %.2f |\n", cn.Round(time.Millisecond), ck.Round(time.Millisecond), float64(cn)/float64(ck))
	return nil
}

// tools returns the nuv and ko binaries to compare: those given, else nuv built from the checkout
// and ko installed from the module proxy, both into tmp.
func tools(tmp, nuvBin, koBin string) (string, string, error) {
	if nuvBin == "" {
		nuvBin = filepath.Join(tmp, "nuv")
		fmt.Println("building nuv ...")
		if err := benchutil.BuildNuv(nuvBin); err != nil {
			return "", "", err
		}
	}
	if koBin == "" {
		gobin := filepath.Join(tmp, "bin")
		fmt.Printf("installing ko %s from the module proxy ...\n", KoVersion)
		cmd := exec.Command("go", "install", "github.com/google/ko@"+KoVersion)
		cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("install ko: %v\n%s", err, out)
		}
		koBin = filepath.Join(gobin, "ko")
	}
	return nuvBin, koBin, nil
}

// builders are the two commands compared — `nuv image push` and `ko build` of the same main
// package from the same tree to the same registry.
type builders struct {
	tmp, src      string // scratch directory and the exported tree
	host, base    string // the registry and ko's base image in it
	mainPkg       string
	nuvBin, koBin string
	common        []string // the environment both run in
}

// nuvCmd is `nuv image push` of the main package to repository repo of the registry.
func (b *builders) nuvCmd(repo string) *exec.Cmd {
	c := exec.Command(b.nuvBin, "image", "push", "--main", b.mainPkg, "--tag", "bench",
		"--platform", "linux/amd64,linux/arm64", "--image", b.host+"/"+repo+"/nuv/whisk-operator")
	c.Dir = b.src
	c.Env = append(b.common, "NUV_PROJECT="+b.src, "NUV_HOME="+filepath.Join(b.tmp, "nuvhome"))
	return c
}

// koCmd is `ko build` of the main package to repository repo of the registry.
func (b *builders) koCmd(repo string) *exec.Cmd {
	c := exec.Command(b.koBin, "build", "--bare", "--sbom=none", "--tags=bench",
		"--platform=linux/amd64,linux/arm64", b.mainPkg)
	c.Dir = b.src
	c.Env = append(b.common, "KO_DOCKER_REPO="+b.host+"/"+repo+"/ko/whisk-operator", "KO_DEFAULTBASEIMAGE="+b.base,
		"KO_CONFIG_PATH="+filepath.Join(b.tmp, "koconfig"))
	return c
}

// writeKoConfig writes the .ko.yaml ko reads: nuv's compiler and link flags and the base image.
func (b *builders) writeKoConfig() error {
	os.MkdirAll(filepath.Join(b.tmp, "koconfig"), 0o755)
	return os.WriteFile(filepath.Join(b.tmp, "koconfig", ".ko.yaml"), []byte(koConfig(b.base, b.mainPkg, "bench")), 0o644)
}

// warmUp runs each tool once, untimed.
func (b *builders) warmUp() error {
	fmt.Println("warm-up ...")
	for _, c := range []*exec.Cmd{b.nuvCmd("warm"), b.koCmd("warm")} {
		if _, err := timed(c); err != nil {
			return err
		}
	}
	return nil
}

// measure runs the two tools alternately runs times, pushing run i to repository repo(i), prints
// each run's times and returns the two medians. Alternating makes load from other work on the
// machine hit both alike.
func (b *builders) measure(runs int, kind string, repo func(i int) string) (time.Duration, time.Duration, error) {
	var nuvT, koT []time.Duration
	for i := 0; i < runs; i++ {
		d, err := timed(b.nuvCmd(repo(i)))
		if err != nil {
			return 0, 0, err
		}
		nuvT = append(nuvT, d)
		d2, err := timed(b.koCmd(repo(i)))
		if err != nil {
			return 0, 0, err
		}
		koT = append(koT, d2)
		fmt.Printf("%s run %d: nuv %s  ko %s\n", kind, i+1, d.Round(time.Millisecond), d2.Round(time.Millisecond))
	}
	return benchutil.Median(nuvT), benchutil.Median(koT), nil
}

// koConfig is the .ko.yaml that gives ko nuv's compiler and link flags for mainPkg (see
// internal/image/gobuild) and the base image pushed to the benchmark's registry.
func koConfig(base, mainPkg, version string) string {
	return fmt.Sprintf(`defaultBaseImage: %s
builds:
- id: operator
  dir: .
  main: %s
  env: [CGO_ENABLED=0]
  flags: [-trimpath, -buildvcs=false]
  ldflags: ["-s", "-w", "-buildid=", "-X main.version=%s"]
`, base, mainPkg, version)
}

// exportHEAD writes the committed tree of the repository at root into dir.
func exportHEAD(root, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", "HEAD")
	archive.Dir = root
	extract := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	extract.Stdin = pipe
	if err := extract.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive HEAD: %w", err)
	}
	return extract.Wait()
}

func gitHead(root string) string {
	out, _ := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	return strings.TrimSpace(string(out))
}

func timed(cmd *exec.Cmd) (time.Duration, error) {
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return d, nil
}

// startRegistry runs Debian's docker-registry on a free loopback port (no auth), or nuv's own
// loopback registry when docker-registry is not installed.
func startRegistry(ctx context.Context, tmp, nuvBin string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	host := fmt.Sprintf("127.0.0.1:%d", port)
	if bin, err := exec.LookPath("docker-registry"); err == nil {
		cfg := filepath.Join(tmp, "registry.yml")
		os.WriteFile(cfg, []byte(fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
			filepath.Join(tmp, "storage"), host)), 0o644)
		cmd := exec.Command(bin, "serve", cfg)
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		stop := func() { cmd.Process.Kill(); cmd.Wait() }
		if err := waitV2(host); err != nil {
			stop()
			return "", nil, err
		}
		fmt.Println("using Debian docker-registry (distribution 2.8)")
		return host, stop, nil
	}
	fmt.Println("docker-registry not installed: using nuv's loopback registry")
	home := filepath.Join(tmp, "regHome")
	env := append(os.Environ(), "NUV_HOME="+home, fmt.Sprintf("NUV_REGISTRY_PORT=%d", port))
	up := exec.Command(nuvBin, "registry", "up")
	up.Env = env
	if out, err := up.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("nuv registry up: %v\n%s", err, out)
	}
	stop := func() {
		down := exec.Command(nuvBin, "registry", "down")
		down.Env = env
		down.Run()
	}
	return host, stop, nil
}

func waitV2(host string) error {
	for i := 0; i < 200; i++ {
		if resp, err := http.Get("http://" + host + "/v2/"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("registry %s did not answer", host)
}

// pushBase pushes ko's base: a multi-arch index whose images carry the CA bundle and the users
// files and run as the non-root user, like nuv's own base layer.
func pushBase(ref string) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	layer, err := baseLayer()
	if err != nil {
		return err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer})
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		cf.Config.User = "65532:65532"
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	return remote.WriteIndex(r, idx)
}
