package localkube

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	nuvsrc "github.com/nuv-dev/nuv"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/runner"
)

// KubeVersion is the Kubernetes version of local clusters (companion.KubeVersion, nuv's pin): the
// only valid --version.
const KubeVersion = companion.KubeVersion

// SupportedVersions lists the valid --version values.
func SupportedVersions() []string { return []string{KubeVersion} }

// Companion gets the binaries that run the cluster components (Prepare): the user's, the cache's,
// the official release binaries, or nuv-kube, nuv's multi-call companion built from source.
type Companion struct {
	// Getenv reads NUV_KUBE_BIN, NUV_CACHE_DIR, XDG_CACHE_HOME, HOME, PATH and the download
	// settings (the kubebin mirrors, NUV_DOWNLOAD_CA_FILE, NUV_DOWNLOAD_TIMEOUT, the proxy variables).
	Getenv func(string) string
	Log    cli.Logger
	// Releases is the table of downloadable releases and pinned checksums (nil: nuv's own).
	Releases []kubebin.Release
	// GOOS and GOARCH choose the platform of downloads ("": this machine's).
	GOOS, GOARCH string
	// Stall ends a download attempt that receives nothing for this long (0: the default, 30 s).
	Stall time.Duration
	// Release is nuv's own release, whose nuv-kube archive it trusts (nil: as compiled in).
	Release *companion.Release
}

// Program is one of the programs nuv builds from its embedded sources (nuvsrc.KubeSources) in the
// companion's cached build (see package companion for the key, the cache layout and the programs).
type Program = companion.Program

// buildKwok returns kwok built from the companion's sources and how it was made. A cached whole
// nuv-kube serves as well (it runs as kwok under that name).
func (c Companion) buildKwok(ctx context.Context) (path, how string, err error) {
	how = "built from source by nuv (sigs.k8s.io/kwok " + kwokModuleVersion() + " through the Go module proxy): kwok's releases publish no checksums to verify a download against"
	if whole, _, _, _ := c.cachedBuild(ctx); whole != "" {
		return whole, how, nil
	}
	bin, err := c.buildProgram(ctx, companion.ProgramKwok, false)
	return bin, how, err
}

// BuildProgram returns a cached build of p or builds it (offline: with the module cache only).
func (c Companion) BuildProgram(ctx context.Context, p Program, offline bool) (string, error) {
	return c.buildProgram(ctx, p, offline)
}

func (c Companion) builder() companion.Builder {
	return companion.Builder{Getenv: c.getenv(), Log: c.log(), Release: c.Release}
}

// cachedBuild returns a nuv-kube built from the embedded sources, or "" with the Go binary and the
// cache directory a build would use (goBin "" when Go is missing: err says so).
func (c Companion) cachedBuild(ctx context.Context) (bin, goBin, dir string, err error) {
	return c.cachedProgram(ctx, companion.ProgramKube)
}

func (c Companion) cachedProgram(ctx context.Context, p Program) (bin, goBin, dir string, err error) {
	if _, err := runner.FindGo(c.getenv()); err != nil {
		// No Go here (any more): a build of these very sources, whatever Go made it, will do.
		return c.anyProgram(p), "", "", fmt.Errorf("nuv builds its Kubernetes components (nuv-kube) once with Go: %w (or set NUV_KUBE_BIN to a prebuilt nuv-kube)", err)
	}
	return c.builder().Cached(ctx, p)
}

// buildCompanion returns a cached nuv-kube or builds one (offline: with the module cache only).
func (c Companion) buildCompanion(ctx context.Context, offline bool) (string, error) {
	return c.buildProgram(ctx, companion.ProgramKube, offline)
}

func (c Companion) buildProgram(ctx context.Context, p Program, offline bool) (string, error) {
	return c.builder().BuildSource(ctx, p, offline)
}

func (c Companion) getenv() func(string) string { return kit.Getenv(c.Getenv) }

func (c Companion) log() cli.Logger { return kit.Log(c.Log) }

// programKey is the cache key of prog's build (companion.Key).
func programKey(goVersion string, prog Program, modules string) (string, error) {
	return companion.Key(goVersion, prog, modules)
}

// programFile says whether the embedded file p is one of prog's sources.
func programFile(prog Program, p string) bool { return prog.Owns(path.Dir(p)) }

// moduleSetPath is where the module set of prog is cached (companion.Builder.ModuleSetPath).
func (c Companion) moduleSetPath(prog Program) (string, error) {
	return c.builder().ModuleSetPath(prog)
}

// moduleSet returns the modules the packages of prog come from (companion.Builder.ModuleSet).
func (c Companion) moduleSet(ctx context.Context, goBin string, prog Program) (string, error) {
	return c.builder().ModuleSet(ctx, goBin, prog)
}

// anyBuild returns a cached nuv-kube built from the embedded sources by any Go version, or "".
func (c Companion) anyBuild() string { return c.anyProgram(companion.ProgramKube) }

func (c Companion) anyProgram(p Program) string { return c.builder().Any(p) }

func isExecutable(p string) bool { return companion.IsExecutable(p) }

// Prune removes the companion builds other than keep (a path Binary returned) that no running
// process executes, and returns the directories removed.
func (c Companion) Prune(keep string) ([]string, error) {
	root := filepath.Join(companion.CacheDir(c.getenv()), "nuv-kube")
	entries, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	inUse := companion.RunningDirs()
	inUse[filepath.Dir(keep)] = true
	var removed []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || inUse[dir] {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("prune %s: %w", dir, err)
		}
		removed = append(removed, dir)
	}
	return removed, nil
}

// Binaries are the component binaries local clusters run and how nuv got them.
type Binaries struct {
	// Path is a nuv-kube companion (a file, run as `nuv-kube <component> FLAGS`) or a directory
	// holding one upstream binary per component (run as `<dir>/<component> FLAGS`).
	Path string
	// Source says how nuv got them, for `nuv cluster status` and `nuv -info`.
	Source string
}

// The explicit choices of PrepareOptions.Source besides a path.
const (
	SourceDownload = "download"
	SourceBuild    = "build"
)

// PrepareOptions choose where the binaries come from.
type PrepareOptions struct {
	// Source is "" (the default order), "download", "build", or the path of a directory of
	// upstream binaries or of a nuv-kube.
	Source string
	// Offline never touches the network: the cache, or a build from the module cache.
	Offline bool
	// Version is the Kubernetes version ("" is KubeVersion).
	Version string
	// Balancer asks for binaries that include the HA balancer: nuv-kube. The default order then
	// skips the release downloads (upstream ships no balancer) and builds if nothing is cached.
	Balancer bool
}

// Settings Prepare reads besides NUV_KUBE_BIN and the cache location.
const (
	// EnvDownloadCA names a PEM file of extra CA certificates for the mirrors (a private CA).
	EnvDownloadCA = "NUV_DOWNLOAD_CA_FILE"
	// EnvDownloadTimeout bounds each download (a Go duration, default 15m).
	EnvDownloadTimeout = "NUV_DOWNLOAD_TIMEOUT"
)

// Prepare returns the component binaries, trying in order: the binaries the user points at
// (--source DIR, else $NUV_KUBE_BIN: a directory or a nuv-kube; refused unless it is Kubernetes
// Version), the cache (a downloaded set, nuv's release of nuv-kube fetched before, a built
// companion when finding it needs no `go list`), nuv-kube from nuv's own release (unpacked beside nuv, else its archive fetched from
// the release location and verified against the checksum compiled into nuv: companion.Released),
// a built companion, the official release binaries downloaded and verified (unless Offline), and last a build from
// source. A download that fails
// falls back to the build with one line saying why. Source "download" or "build" takes only that
// way (or its cached result).
func (c Companion) Prepare(ctx context.Context, o PrepareOptions) (Binaries, error) {
	if o.Version == "" {
		o.Version = KubeVersion
	}
	o.Version = strings.TrimPrefix(o.Version, "v")
	if _, err := kubebin.Find(c.releases(), o.Version); err != nil {
		return Binaries{}, err
	}
	if o.Version != KubeVersion {
		return Binaries{}, fmt.Errorf("this nuv runs Kubernetes %s only (its companion's version); %s is not supported", KubeVersion, o.Version)
	}
	getenv := c.getenv()
	switch o.Source {
	case "":
		if p := getenv("NUV_KUBE_BIN"); p != "" {
			return c.fromPath(ctx, p, "NUV_KUBE_BIN="+p, o.Version)
		}
	case SourceDownload:
		if o.Offline {
			return Binaries{}, cli.Usagef("--source download needs the network: drop --offline")
		}
		return c.download(ctx, o.Version)
	case SourceBuild:
		return c.built(ctx, o.Offline)
	default:
		return c.fromPath(ctx, o.Source, o.Source, o.Version)
	}
	if b, ok := c.cachedDownload(o.Version); ok && !o.Balancer {
		return b, nil
	}
	if b, ok := c.releaseCached(); ok {
		return b, nil
	}
	if bin := c.builder().CachedQuick(ctx, companion.ProgramKube); bin != "" {
		return Binaries{Path: bin, Source: builtSource(bin)}, nil
	}
	if b, ok, err := c.released(ctx, o.Offline); ok {
		return b, nil
	} else if err != nil {
		if isRefused(err) || ctx.Err() != nil {
			return Binaries{}, err
		}
		c.log().Infof("could not fetch nuv's release of nuv-kube (%s): trying the other sources", firstLine(err))
	}
	if bin, _, _, _ := c.cachedBuild(ctx); bin != "" {
		return Binaries{Path: bin, Source: builtSource(bin)}, nil
	}
	if !o.Offline && !o.Balancer {
		b, err := c.download(ctx, o.Version)
		if err == nil {
			return b, nil
		}
		if ctx.Err() != nil {
			return Binaries{}, err
		}
		c.log().Infof("could not download the Kubernetes binaries (%s): building them from source instead", firstLine(err))
	}
	return c.built(ctx, o.Offline)
}

func (c Companion) releases() []kubebin.Release {
	if c.Releases != nil {
		return c.Releases
	}
	return kubebin.Releases()
}

func (c Companion) platform() (string, string) {
	goos, goarch := c.GOOS, c.GOARCH
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return goos, goarch
}

func (c Companion) cachedDownload(version string) (Binaries, bool) {
	goos, goarch := c.platform()
	dir, origin, ok := kubebin.Cached(companion.CacheDir(c.getenv()), version, goos, goarch)
	if !ok {
		return Binaries{}, false
	}
	return Binaries{Path: dir, Source: downloadedSource(origin)}, true
}

func downloadedSource(o kubebin.Origin) string {
	pinned := ""
	for _, f := range o.Files {
		for _, ch := range f.Checked {
			if ch == kubebin.PinnedByNuv {
				pinned = " and nuv's pins"
			}
		}
	}
	var built []string
	for _, f := range o.Files {
		if f.Built != "" {
			built = append(built, f.Component)
		}
	}
	line := fmt.Sprintf("downloaded from %s on %s, SHA-256 verified against the release checksum files%s", strings.Join(o.Hosts(), ", "), o.Fetched.Format("2006-01-02"), pinned)
	if len(built) > 0 {
		line += "; " + strings.Join(built, ", ") + " built from source by nuv"
	}
	return line
}

func builtSource(bin string) string {
	return "built from source by nuv (nuv-kube, modules from the Go module proxy): " + bin
}

func (c Companion) built(ctx context.Context, offline bool) (Binaries, error) {
	bin, err := c.buildCompanion(ctx, offline)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Path: bin, Source: builtSource(bin)}, nil
}

func (c Companion) download(ctx context.Context, version string) (Binaries, error) {
	if b, ok := c.cachedDownload(version); ok {
		return b, nil
	}
	getenv := c.getenv()
	mirrors, err := kubebin.MirrorsFromEnv(getenv)
	if err != nil {
		return Binaries{}, err
	}
	client, err := kubebin.NewClient(getenv(EnvDownloadCA), getenv)
	if err != nil {
		return Binaries{}, fmt.Errorf("%s: %w", EnvDownloadCA, err)
	}
	var timeout time.Duration
	if v := getenv(EnvDownloadTimeout); v != "" {
		if timeout, err = time.ParseDuration(v); err != nil || timeout <= 0 {
			return Binaries{}, fmt.Errorf("%s=%q: want a duration such as 10m", EnvDownloadTimeout, v)
		}
	}
	goos, goarch := c.platform()
	f := kubebin.Fetcher{
		Downloader: kubebin.Downloader{Client: client, Log: c.log(), Timeout: timeout, Stall: c.Stall},
		Releases:   c.releases(), Mirrors: mirrors, CacheDir: companion.CacheDir(getenv), GOOS: goos, GOARCH: goarch, Log: c.log(),
	}
	if goos == runtime.GOOS && goarch == runtime.GOARCH {
		f.Build = func(ctx context.Context, component string) (string, string, error) {
			if component != "kwok" {
				return "", "", fmt.Errorf("nuv builds only kwok from source on its own; %s must be downloaded and verified", component)
			}
			return c.buildKwok(ctx)
		}
	}
	if native := goos == runtime.GOOS && goarch == runtime.GOARCH; native {
		f.Check = func(dir string) error { // the sums came from the mirror too: ask the binaries
			got, err := BinariesVersion(ctx, dir)
			if err != nil {
				return err
			}
			if got != "v"+version {
				return fmt.Errorf("kube-apiserver --version says %s, want v%s", got, version)
			}
			return nil
		}
	}
	if _, err := f.Fetch(ctx, version); err != nil {
		return Binaries{}, err
	}
	b, ok := c.cachedDownload(version)
	if !ok {
		return Binaries{}, fmt.Errorf("downloaded Kubernetes binaries are not in the cache (%s)", kubebin.SetDir(companion.CacheDir(getenv), version, goos, goarch))
	}
	return b, nil
}

// fromPath accepts a directory of upstream binaries or a nuv-kube the user names (how is the setting
// that named it), after checking it is Kubernetes version.
func (c Companion) fromPath(ctx context.Context, p, how, version string) (Binaries, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return Binaries{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Binaries{}, fmt.Errorf("%s: %w", how, err)
	}
	if st.IsDir() {
		var missing []string
		for _, comp := range kubebin.Components {
			if !isExecutable(filepath.Join(abs, comp)) {
				missing = append(missing, comp)
			}
		}
		if len(missing) > 0 {
			return Binaries{}, fmt.Errorf("%s: the directory has no executable %s (it needs %s)", how, strings.Join(missing, ", "), strings.Join(kubebin.Components, ", "))
		}
	} else if !isExecutable(abs) {
		return Binaries{}, fmt.Errorf("%s is not an executable file", how)
	}
	got, err := BinariesVersion(ctx, abs)
	if err != nil {
		return Binaries{}, fmt.Errorf("%s: %w", how, err)
	}
	if got != "v"+version {
		return Binaries{}, fmt.Errorf("%s is Kubernetes %s, but this nuv runs Kubernetes v%s: point it at v%s binaries", how, got, version, version)
	}
	kind := "nuv-kube"
	if st.IsDir() {
		kind = "a directory of binaries"
	}
	return Binaries{Path: abs, Source: fmt.Sprintf("given by %s (%s, %s)", how, kind, got)}, nil
}

// BinariesVersion asks a set which Kubernetes version it is: `nuv-kube version`, or
// `<dir>/kube-apiserver --version` ("Kubernetes v1.36.3").
func BinariesVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := runner.Cmd{Path: path, Args: []string{"version"}}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		cmd = runner.Cmd{Path: filepath.Join(path, "kube-apiserver"), Args: []string{"--version"}}
	}
	out, err := runner.Output(ctx, cmd)
	if err != nil {
		return "", fmt.Errorf("cannot tell its Kubernetes version: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", fmt.Errorf("%s %s printed no version", cmd.Path, strings.Join(cmd.Args, " "))
	}
	return f[len(f)-1], nil
}

// componentCommand is the program and arguments that run one component (args[0] is its name, as in
// the plan) with the binaries at bin: the companion takes the name as its first argument; a
// directory holds one upstream binary per component, which takes the same flags (etcd names its
// configuration flag --config-file, which nuv-kube accepts too).
func componentCommand(bin string, args []string) (string, []string, error) {
	st, err := os.Stat(bin)
	if err != nil || !st.IsDir() {
		return bin, args, nil
	}
	name, rest := args[0], append([]string(nil), args[1:]...)
	switch name {
	case "lb":
		return "", nil, fmt.Errorf("the HA balancer is part of nuv's companion (nuv-kube), not of the upstream binaries in %s: unset NUV_KUBE_BIN (nuv then uses or builds nuv-kube) or point it at a nuv-kube", bin)
	case "etcd":
		for i, a := range rest {
			if a == "--config" {
				rest[i] = "--config-file"
			}
		}
	}
	return filepath.Join(bin, name), rest, nil
}

// Describe says, without building, downloading or running anything, which binaries the next local
// cluster would run and how nuv got them (for `nuv -info`).
func (c Companion) Describe(ctx context.Context) string {
	if p := c.getenv()("NUV_KUBE_BIN"); p != "" {
		return "given by NUV_KUBE_BIN=" + p
	}
	if b, ok := c.cachedDownload(KubeVersion); ok {
		return b.Source + ": " + b.Path
	}
	if b, ok := c.releaseCached(); ok {
		return b.Source
	}
	if bin, _, _, _ := c.cachedBuild(ctx); bin != "" {
		return builtSource(bin)
	}
	return "none yet: the first local cluster (or `nuv cluster prepare`) downloads the official release binaries, verified, or builds them from source"
}

// BinariesOf returns the name of the local cluster under home whose kubeconfig is kubeconfig and
// how it got its binaries (as recorded when it was created or last started); ok is false when no
// local cluster has that kubeconfig.
func BinariesOf(home, kubeconfig string) (name, source string, ok bool) {
	if kubeconfig == "" {
		return "", "", false
	}
	dirs, _ := filepath.Glob(filepath.Join(home, "clusters", "*"))
	for _, dir := range dirs {
		s, err := loadState(dir)
		if err == nil && s.Kubeconfig == kubeconfig {
			src := s.BinarySource
			if src == "" {
				src = "not recorded (created by an older nuv): " + s.Binary
			}
			return s.Name, src, true
		}
	}
	return "", "", false
}

// kwokModuleVersion is the sigs.k8s.io/kwok version the companion's go.mod requires ("v0.8.0").
func kwokModuleVersion() string {
	b, err := nuvsrc.KubeSources.ReadFile("go.mod")
	if err != nil {
		return "(unknown version)"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "sigs.k8s.io/kwok" {
			return f[1]
		}
	}
	return "(unknown version)"
}
