// Package release makes nuv's release: for each platform one archive nuv_<version>_<os>_<arch>.tar.gz
// holding the slim `nuv` and the programs it hands work to, side by side; an SBOM per archive
// (CycloneDX JSON, from the module list the Go toolchain records in each binary); and checksums.txt
// (SHA-256 of every archive and SBOM, sorted by name). cmd/nuv-release is its thin command and
// `task release` runs that.
//
// Two builds of one commit are byte-identical: programs are built with -trimpath, CGO_ENABLED=0,
// -buildvcs=true (the Go toolchain then records the commit, its time and whether the tree was
// modified: the same for every build of one tree) and -ldflags stamping version and commit, never
// a date; archive entries are sorted, owned by 0:0, with fixed modes and the commit's time as
// mtime (or SOURCE_DATE_EPOCH); the gzip header carries no name and no time; the SBOM's only time
// is the commit's.
//
// The version is the tag at HEAD without its leading "v", else 0.0.0-SNAPSHOT-<short commit>, with
// -dirty appended when the work tree has changes (Describe).
package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/version"
)

// Platform is one GOOS/GOARCH pair a release is built for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// DefaultPlatforms are the platforms of a release.
var DefaultPlatforms = []Platform{{"darwin", "amd64"}, {"darwin", "arm64"}, {"linux", "amd64"}, {"linux", "arm64"}}

// Host is the platform this process runs on.
func Host() Platform { return Platform{runtime.GOOS, runtime.GOARCH} }

// ParsePlatforms reads a comma-separated list of os/arch pairs.
func ParsePlatforms(list string) ([]Platform, error) {
	var out []Platform
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		o, a, ok := strings.Cut(s, "/")
		if !ok || o == "" || a == "" || strings.Contains(a, "/") {
			return nil, fmt.Errorf("platform %q: want os/arch, e.g. linux/amd64", s)
		}
		out = append(out, Platform{o, a})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no platform in %q", list)
	}
	return out, nil
}

// Program is one program of an archive: its file name and its main package (relative to the
// module directory).
type Program struct{ Name, Package string }

// Programs are what an archive holds: the slim front, which users run, nuv's full program, which
// the front finds beside itself (internal/front) and hands every command beyond the daily verbs
// to, the task program, which runs Taskfiles for `task` and `nuv -task`, and the emulators'
// program, which runs `nuv emulator` (the full program links no emulator). The full program
// builds and downloads the rest (nuv-kube, the node image's binaries) itself on first use.
var Programs = []Program{{"nuv", "./nuv"}, {"nuv-full", "./cmd/nuv-full"}, {"nuv-task", "./cmd/nuv-task"}, {"nuv-emulator", "./cmd/nuv-emulator"}}

// Stamp names what is released.
type Stamp struct {
	// Version is the release's version (no leading "v").
	Version string
	// Commit is the full commit hash.
	Commit string
	// Epoch is the commit's time (or SOURCE_DATE_EPOCH), in seconds: the only time in a release.
	Epoch int64
	// Companions is the value of version.Companions stamped into nuv's programs: the SHA-256 of
	// the companion archives built first ("" when the release has none).
	Companions string
	// OperatorSources is the value of version.OperatorSources: the hash of the reference
	// operator's sources, when the release has its archive ("" otherwise).
	OperatorSources string
}

// Describe works out the stamp of the git work tree dir: the tag at HEAD (else a snapshot
// version), the commit, and the commit time unless SOURCE_DATE_EPOCH says otherwise.
func Describe(ctx context.Context, dir string, getenv func(string) string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	var s Stamp
	var err error
	if s.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return s, err
	}
	ct, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return s, err
	}
	if s.Epoch, err = strconv.ParseInt(ct, 10, 64); err != nil {
		return s, fmt.Errorf("commit time %q of %s: %w", ct, s.Commit, err)
	}
	if e := getenv("SOURCE_DATE_EPOCH"); e != "" {
		if s.Epoch, err = strconv.ParseInt(e, 10, 64); err != nil || s.Epoch < 0 {
			return s, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", e)
		}
	}
	tags, err := git("tag", "--points-at", "HEAD", "--sort=-v:refname")
	if err != nil {
		return s, err
	}
	if t, _, _ := strings.Cut(tags, "\n"); t != "" {
		s.Version = strings.TrimPrefix(t, "v")
	} else {
		s.Version = "0.0.0-SNAPSHOT-" + s.Commit[:min(12, len(s.Commit))]
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return s, err
	}
	if status != "" {
		s.Version += "-dirty"
	}
	return s, nil
}

// Config is one release build.
type Config struct {
	// Dir is nuv's module directory (a git work tree).
	Dir string
	// Out is where the release is written (dist/). Earlier release files in it are replaced; any
	// other file there makes Build refuse.
	Out string
	Stamp
	Platforms []Platform
	// Programs default to Programs.
	Programs []Program
	// Companions are the companion archives built before nuv's own (companion.ReleaseArchives for
	// a full release; nil: none, and nuv's programs trust no companion archive).
	Companions []companion.ReleaseArchive
	// Go is the go command (default "go" on PATH).
	Go string
	// Env is the environment of the builds (default os.Environ()).
	Env []string
	Log cli.Logger
}

// Artifact is one file of a release.
type Artifact struct {
	Platform Platform
	// Path is the archive; SBOM its SBOM.
	Path, SBOM string
	// Binaries are the built programs, in Result.BinDir until Result.Cleanup.
	Binaries []Binary
}

// Binary is one built program.
type Binary struct {
	Name, Path string
}

// Result is what Build wrote.
type Result struct {
	Archives []Artifact
	// Companions are the companion archives (nuv-kube_..., nuv-node_...), sorted by name.
	Companions []Artifact
	Checksums  string
	// BinDir holds the built binaries per platform (<BinDir>/<os>_<arch>/<name>) until Cleanup.
	BinDir string
}

// Cleanup removes the built binaries.
func (r *Result) Cleanup() {
	if r != nil && r.BinDir != "" {
		_ = os.RemoveAll(r.BinDir)
	}
}

// ArchiveName is the archive of platform p for version v.
func ArchiveName(v string, p Platform) string {
	return fmt.Sprintf("nuv_%s_%s_%s.tar.gz", v, p.OS, p.Arch)
}

// ChecksumsName is the checksum file of a release.
const ChecksumsName = "checksums.txt"

// isReleaseFile reports whether name is one Build writes (and may therefore replace).
// Temporary files an interrupted build left (".<name>.tmp-*", "<name>.tmp*") count as its files.
func isReleaseFile(name string) bool {
	if base, _, tmp := strings.Cut(strings.TrimPrefix(name, "."), ".tmp"); tmp {
		name = base
	}
	return name == ChecksumsName || isCompanionFile(name) || (strings.HasPrefix(name, "nuv_") &&
		(strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".sbom.json")))
}

// Build builds every program for every platform, writes the archives, their SBOMs and the
// checksum file into Out, and returns them. The caller calls Result.Cleanup.
func Build(ctx context.Context, c Config) (*Result, error) {
	if c.Version == "" || c.Commit == "" {
		return nil, fmt.Errorf("release: no version or commit (Describe the work tree first)")
	}
	if strings.ContainsAny(c.Version, " /'\"") {
		return nil, fmt.Errorf("release: version %q: no spaces, slashes or quotes", c.Version)
	}
	if len(c.Programs) == 0 {
		c.Programs = Programs
	}
	if len(c.Platforms) == 0 {
		return nil, fmt.Errorf("release: no platform")
	}
	if c.Go == "" {
		c.Go = "go"
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	log := c.Log
	if log == nil {
		log = cli.Quiet()
	}
	if err := prepareOut(c.Out); err != nil {
		return nil, err
	}
	binDir, err := os.MkdirTemp("", "nuv-release-")
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	res := &Result{BinDir: binDir}
	mtime := time.Unix(c.Epoch, 0).UTC()
	if len(c.Companions) > 0 { // first: nuv's programs carry their checksums
		if res.Companions, c.Stamp.Companions, c.Stamp.OperatorSources, err = c.buildCompanions(ctx, binDir, mtime, log); err != nil {
			res.Cleanup()
			return nil, err
		}
	}
	for _, p := range c.Platforms {
		start := time.Now()
		dir := filepath.Join(binDir, p.OS+"_"+p.Arch)
		var bins []Binary
		for _, prog := range c.Programs {
			bin := filepath.Join(dir, prog.Name)
			if err := c.compile(ctx, p, prog, bin); err != nil {
				res.Cleanup()
				return nil, err
			}
			bins = append(bins, Binary{Name: prog.Name, Path: bin})
		}
		a := Artifact{Platform: p, Path: filepath.Join(c.Out, ArchiveName(c.Version, p)), Binaries: bins}
		if err := WriteArchive(a.Path, bins, mtime); err != nil {
			res.Cleanup()
			return nil, err
		}
		sum, err := fsutil.SHA256File(a.Path)
		if err != nil {
			res.Cleanup()
			return nil, err
		}
		sbom, err := SBOM(filepath.Base(a.Path), sum, c.Stamp, bins)
		if err != nil {
			res.Cleanup()
			return nil, err
		}
		a.SBOM = a.Path[:len(a.Path)-len(".tar.gz")] + ".sbom.json"
		if err := fsutil.WriteFileAtomic(a.SBOM, sbom, 0o644); err != nil {
			res.Cleanup()
			return nil, fmt.Errorf("release: write %s: %w", a.SBOM, err)
		}
		res.Archives = append(res.Archives, a)
		size := int64(0)
		if st, err := os.Stat(a.Path); err == nil {
			size = st.Size()
		}
		log.Infof("built %s (%s) in %s", filepath.Base(a.Path), humanSize(size), time.Since(start).Round(100*time.Millisecond))
	}
	var files []string
	for _, a := range append(append([]Artifact(nil), res.Companions...), res.Archives...) {
		files = append(files, a.Path, a.SBOM)
	}
	res.Checksums = filepath.Join(c.Out, ChecksumsName)
	if err := WriteChecksums(res.Checksums, files); err != nil {
		res.Cleanup()
		return nil, err
	}
	return res, nil
}

// prepareOut makes out and removes the release files of an earlier build from it; a file Build
// does not write makes it refuse, so that a mistyped -out never loses anything.
func prepareOut(out string) error {
	if out == "" {
		return fmt.Errorf("release: no output directory")
	}
	entries, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("release: read %s: %w", out, err)
	}
	for _, e := range entries {
		if e.IsDir() || !isReleaseFile(e.Name()) {
			return fmt.Errorf("release: %s holds %s, which is no release file: choose an empty or release directory", out, e.Name())
		}
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(out, e.Name())); err != nil {
			return fmt.Errorf("release: %w", err)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// Ldflags are the linker flags of a release build: no symbol table or DWARF, version and commit.
func Ldflags(s Stamp) string {
	flags := "-s -w " + version.Ldflags(s.Version, s.Commit)
	if s.Companions != "" {
		flags += " -X " + version.CompanionsVar + "=" + s.Companions
	}
	if s.OperatorSources != "" {
		flags += " -X " + version.OperatorSourcesVar + "=" + s.OperatorSources
	}
	return flags
}

// BuildArgs are the go command's arguments that build prog into out.
func BuildArgs(s Stamp, prog Program, out string) []string {
	return []string{"build", "-trimpath", "-buildvcs=true", "-ldflags=" + Ldflags(s), "-o", out, prog.Package}
}

// compile builds prog for p into out.
func (c Config) compile(ctx context.Context, p Platform, prog Program, out string) error {
	return c.run(ctx, p, BuildArgs(c.Stamp, prog, out), prog.Package)
}

// run runs the go command with args for platform p in the module directory; what names the
// package built, for the error.
func (c Config) run(ctx context.Context, p Platform, args []string, what string) error {
	cmd := exec.CommandContext(ctx, c.Go, args...)
	cmd.Dir = c.Dir
	cmd.Env = buildEnv(c.Env, p)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("release: build %s for %s: %w\n%s", what, p, err, strings.TrimSpace(output.String()))
	}
	return nil
}

// buildEnv is env with the target platform, cgo off, and nothing that would change what is built
// from the outside (GOFLAGS, GOAMD64 and the like: their defaults).
func buildEnv(env []string, p Platform) []string {
	drop := map[string]bool{"GOOS": true, "GOARCH": true, "CGO_ENABLED": true, "GOFLAGS": true,
		"GOAMD64": true, "GOARM64": true, "GOEXPERIMENT": true, "GOTOOLCHAIN": true}
	out := make([]string, 0, len(env)+5)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
}

// WriteChecksums writes the SHA-256 of every file, one "<hex>  <base name>" line each, sorted by
// name (the format sha256sum -c reads).
func WriteChecksums(path string, files []string) error {
	lines := make([]string, 0, len(files))
	for _, f := range files {
		sum, err := fsutil.SHA256File(f)
		if err != nil {
			return err
		}
		lines = append(lines, sum+"  "+filepath.Base(f))
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	if err := fsutil.WriteFileAtomic(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("release: write %s: %w", path, err)
	}
	return nil
}

func humanSize(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
