package companion

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/version"
)

// ReleaseArchive is one companion release archive, <Name>_<version>_<os>_<arch>.tar.gz: the
// programs it holds, side by side, each built from nuv's module with the Program's tags and
// ldflags (internal/release builds it, this file fetches it).
type ReleaseArchive struct {
	Name     string
	Programs []Program
	// LinuxOnly archives are built for linux only, on every architecture of the release: the node
	// image's programs run in a Linux container (on a darwin host, in its Docker VM).
	LinuxOnly bool
}

// ReleaseArchives are the companion archives of a release: nuv-kube (local clusters, every
// platform nuv runs on), nuv-node with nuv-pause (node images, linux only) and the reference
// operator (run on a local cluster's host, every platform).
var ReleaseArchives = []ReleaseArchive{
	{Name: "nuv-kube", Programs: []Program{ProgramKube}},
	{Name: "nuv-node", Programs: []Program{ProgramNode, ProgramPause}, LinuxOnly: true},
	{Name: "whisk-operator", Programs: []Program{ProgramOperator}},
}

// ProgramOperator is nuv's reference operator (operator/cmd/whisk-operator), which `nuv operator`
// runs on a local cluster's host. nuv builds it from the project's sources with Go; a release
// ships the build of its own sources, used for a project whose operator is the release's
// (internal/deploy). It has no embedded sources: only the release builds it.
var ProgramOperator = Program{Name: "whisk-operator", Dirs: []string{"operator/cmd/whisk-operator"}, What: "nuv's reference operator"}

// FileName is the archive's file name for version v on goos/goarch.
func (a ReleaseArchive) FileName(v, goos, goarch string) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", a.Name, v, goos, goarch)
}

// Holds says whether the archive holds a program of that name.
func (a ReleaseArchive) Holds(name string) bool {
	for _, p := range a.Programs {
		if p.Name == name {
			return true
		}
	}
	return false
}

// EnvReleaseMirror names the URL of a directory holding a nuv release's files (what `task
// release` writes into dist/): the companion archives are fetched from there. https, or http to a
// loopback address; the default is the project's GitHub release of this nuv's version
// (DefaultReleaseURL).
const EnvReleaseMirror = "NUV_RELEASE_MIRROR"

// DefaultReleaseURL is where the release of version v is downloaded from.
func DefaultReleaseURL(v string) string {
	return "https://github.com/nuv-dev/nuv/releases/download/v" + v
}

// Release is what this nuv knows of its own release: the version, the SHA-256 of every companion
// archive built with it (compiled in at release time: version.Companions) and where to look for
// unpacked companions beside nuv.
type Release struct {
	// Version is the release's version (the file names' <version>).
	Version string
	// Self is this nuv's build: a companion found beside nuv must be a build of the same version.
	Self version.Build
	// Sums maps version.CompanionKey(archive, os, arch) to the archive's SHA-256; empty for a build
	// that was not released, which then never fetches a companion archive.
	Sums map[string]string
	// Beside are the directories an unpacked companion may sit in next to nuv (default: the
	// running program's and the slim nuv's, $NUV_FRONT, symlinks resolved).
	Beside []string
	// Archives default to ReleaseArchives.
	Archives []ReleaseArchive
	// GOOS and GOARCH default to this machine's.
	GOOS, GOARCH string
}

// ThisRelease is the release of the running nuv, as compiled in. A Companions value that does not
// parse gives no sums (and a warning through log): nothing is then trusted.
func ThisRelease(log cli.Logger) Release {
	sums, err := version.ParseCompanions(version.Companions)
	if err != nil && log != nil {
		log.Warnf("this nuv's compiled-in companion checksums do not parse (%v): it fetches no companion archive", err)
	}
	return Release{Version: version.Version, Self: version.Self(), Sums: sums}
}

func (r Release) platform() (string, string) {
	goos, goarch := r.GOOS, r.GOARCH
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return goos, goarch
}

// archiveOf returns the archive that holds the program called name.
func (r Release) archiveOf(name string) (ReleaseArchive, bool) {
	archives := r.Archives
	if archives == nil {
		archives = ReleaseArchives
	}
	for _, a := range archives {
		if a.Holds(name) {
			return a, true
		}
	}
	return ReleaseArchive{}, false
}

func (r Release) besideDirs() []string {
	if r.Beside != nil {
		return r.Beside
	}
	var dirs []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" {
			return
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if d := filepath.Dir(p); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if exe, err := os.Executable(); err == nil {
		add(exe)
	}
	add(os.Getenv(cli.EnvFront))
	return dirs
}

// ReleaseOrigin is a fetched archive's origin.json: where it came from and what it was checked
// against.
type ReleaseOrigin struct {
	Archive string    `json:"archive"`
	URL     string    `json:"url"`
	SHA256  string    `json:"sha256"`
	Checked string    `json:"checked"`
	Fetched time.Time `json:"fetched"`
}

// Source is the one line `nuv cluster status` and `nuv -info` show.
func (o ReleaseOrigin) Source() string {
	host := o.URL
	if u, err := neturl.Parse(o.URL); err == nil && u.Host != "" {
		host = u.Scheme + "://" + u.Host
	}
	return fmt.Sprintf("nuv's release archive %s, downloaded from %s on %s, SHA-256 verified against %s",
		o.Archive, host, o.Fetched.Format("2006-01-02"), o.Checked)
}

// ErrRefused marks a companion archive or program nuv refused: a checksum that does not match, a
// companion of another version beside nuv, an archive that is not what a release writes. Callers
// stop there rather than fall back: it says something is wrong with the mirror or the install.
var ErrRefused = errors.New("refused")

// ReleaseDir is where the archive of version v for a platform is unpacked in the cache:
// CacheDir/<archive>/release-<version>-<os>-<arch>/.
func ReleaseDir(cacheDir string, a ReleaseArchive, v, goos, goarch string) string {
	return filepath.Join(cacheDir, a.Name, fmt.Sprintf("release-%s-%s-%s", v, goos, goarch))
}

const releaseOriginFile = "origin.json"

// releaseComplete reads the origin of an unpacked archive whose programs are all there.
func releaseComplete(dir string, a ReleaseArchive) (ReleaseOrigin, bool) {
	b, err := os.ReadFile(filepath.Join(dir, releaseOriginFile))
	if err != nil {
		return ReleaseOrigin{}, false
	}
	var o ReleaseOrigin
	if json.Unmarshal(b, &o) != nil {
		return ReleaseOrigin{}, false
	}
	for _, p := range a.Programs {
		if !IsExecutable(filepath.Join(dir, p.Name)) {
			return ReleaseOrigin{}, false
		}
	}
	return o, true
}

// ReleaseCached returns p from this nuv's release archive unpacked in the cache before, with its
// origin, or "" (p is in no archive, or none was fetched).
func (b Builder) ReleaseCached(p Program) (string, ReleaseOrigin) {
	r := b.release()
	a, ok := r.archiveOf(p.Name)
	if !ok || r.Version == "" {
		return "", ReleaseOrigin{}
	}
	goos, goarch := r.platform()
	dir := ReleaseDir(CacheDir(b.getenv()), a, r.Version, goos, goarch)
	o, ok := releaseComplete(dir, a)
	if !ok {
		return "", ReleaseOrigin{}
	}
	return filepath.Join(dir, p.Name), o
}

// Beside returns p unpacked next to nuv (a companion archive unpacked into nuv's directory), or
// "". One of another version is refused (ErrRefused) with a message naming both.
func (b Builder) Beside(p Program) (string, error) {
	r := b.release()
	if _, ok := r.archiveOf(p.Name); !ok {
		return "", nil
	}
	for _, dir := range r.besideDirs() {
		bin := filepath.Join(dir, p.Name)
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		if !IsExecutable(bin) {
			return "", fmt.Errorf("%s beside nuv is not an executable file: %w", bin, ErrRefused)
		}
		theirs, err := version.Of(bin)
		if err != nil {
			return "", fmt.Errorf("%s beside nuv: %w", bin, err)
		}
		if !r.Self.Same(theirs) {
			return "", fmt.Errorf("%s is %s %s, but this nuv is %s: a companion beside nuv must come from nuv's own release (unpack %s of version %s there, or remove %s): %w",
				bin, p.Name, theirs, r.Self, r.archiveName(p.Name), r.Version, bin, ErrRefused)
		}
		return bin, nil
	}
	return "", nil
}

func (r Release) archiveName(prog string) string {
	a, _ := r.archiveOf(prog)
	goos, goarch := r.platform()
	return a.FileName(r.Version, goos, goarch)
}

// Trusts says whether this nuv has a compiled-in checksum for the archive holding p on its
// platform: whether FetchRelease can get p.
func (b Builder) Trusts(p Program) bool {
	r := b.release()
	a, ok := r.archiveOf(p.Name)
	if !ok {
		return false
	}
	goos, goarch := r.platform()
	return r.Sums[version.CompanionKey(a.Name, goos, goarch)] != ""
}

// ReleaseURL is the URL of file in this nuv's release: $NUV_RELEASE_MIRROR/<file>, else the
// project's release download. A mirror must be https, or http to a loopback address.
func (b Builder) ReleaseURL(file string) (string, error) {
	base := b.getenv()(EnvReleaseMirror)
	if base == "" {
		return DefaultReleaseURL(b.release().Version) + "/" + file, nil
	}
	u, err := neturl.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return "", fmt.Errorf("%s=%q: want an https:// URL (or http:// to a loopback address) of a directory holding a nuv release's files", EnvReleaseMirror, base)
	}
	return strings.TrimSuffix(base, "/") + "/" + file, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// FetchRelease downloads the release archive holding p for this nuv's version and platform,
// verifies its SHA-256 against the one compiled into nuv, unpacks it into the cache (ReleaseDir,
// published whole or not at all, with origin.json) and returns p's path there. It returns ""
// without touching the network when this nuv has no checksum for that archive (a build that was
// not released) or offline is set. A checksum that does not match is ErrRefused and leaves
// nothing behind.
func (b Builder) FetchRelease(ctx context.Context, p Program, offline bool) (string, error) {
	if bin, _ := b.ReleaseCached(p); bin != "" {
		return bin, nil
	}
	r := b.release()
	a, ok := r.archiveOf(p.Name)
	if !ok || offline {
		return "", nil
	}
	goos, goarch := r.platform()
	want := r.Sums[version.CompanionKey(a.Name, goos, goarch)]
	if want == "" {
		return "", nil
	}
	getenv := b.getenv()
	cache := CacheDir(getenv)
	dst := ReleaseDir(cache, a, r.Version, goos, goarch)
	file := a.FileName(r.Version, goos, goarch)
	url, err := b.ReleaseURL(file)
	if err != nil {
		return "", err
	}
	client, err := kubebin.NewClient(getenv("NUV_DOWNLOAD_CA_FILE"), getenv)
	if err != nil {
		return "", fmt.Errorf("NUV_DOWNLOAD_CA_FILE: %w", err)
	}
	log := b.log()
	unlock, err := fsutil.Lock(ctx, filepath.Join(cache, a.Name, "release.lock"), func() {
		log.Infof("waiting for another nuv fetching %s", file)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, ok := releaseComplete(dst, a); ok { // fetched by another nuv while we waited
		return filepath.Join(dst, p.Name), nil
	}
	start := time.Now()
	log.Infof("fetching %s (%s) from %s", file, a.programNames(), url)
	err = fsutil.PublishDir(dst, 0o755, func(tmp string) error {
		archive := filepath.Join(tmp, "."+file+".partial")
		d := kubebin.Downloader{Client: client, Log: log}
		if err := d.Fetch(ctx, url, archive, file); err != nil {
			return fmt.Errorf("fetch %s: %w", file, err)
		}
		got, err := fsutil.SHA256File(archive)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s from %s has SHA-256 %s, but nuv %s was released with %s for it: %w, nothing cached (a tampered mirror, or another version's archive under this name)",
				file, url, got, r.Version, want, ErrRefused)
		}
		if err := unpack(archive, tmp, a); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.Remove(archive); err != nil {
			return err
		}
		o := ReleaseOrigin{Archive: file, URL: url, SHA256: want, Checked: "the checksum compiled into nuv " + r.Version, Fetched: time.Now().UTC()}
		data, err := json.MarshalIndent(o, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, releaseOriginFile), append(data, '\n'), 0o644)
	}, func(dir string) bool { _, ok := releaseComplete(dir, a); return ok })
	if err != nil {
		return "", err
	}
	log.Infof("fetched and verified %s in %s: %s", file, time.Since(start).Round(100*time.Millisecond), dst)
	return filepath.Join(dst, p.Name), nil
}

func (a ReleaseArchive) programNames() string {
	names := make([]string, len(a.Programs))
	for i, p := range a.Programs {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// unpack writes the programs of the release archive at path into dir. The archive must hold
// exactly a's programs, as regular files at its top level: anything else is refused.
func unpack(path, dir string, a ReleaseArchive) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	tr := tar.NewReader(gz)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !a.Holds(h.Name) || seen[h.Name] {
			return fmt.Errorf("unexpected entry %q (a release archive of %s holds only %s, once each): %w", h.Name, a.Name, a.programNames(), ErrRefused)
		}
		seen[h.Name] = true
		if err := writeExecutable(filepath.Join(dir, h.Name), tr); err != nil {
			return err
		}
	}
	for _, p := range a.Programs {
		if !seen[p.Name] {
			return fmt.Errorf("no %s in the archive: %w", p.Name, ErrRefused)
		}
	}
	return nil
}

func writeExecutable(dst string, r io.Reader) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("unpack %s: %w", dst, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Released returns p from this nuv's release, in order: unpacked in the cache before, beside nuv,
// fetched now. "" with no error when none applies (a build that was not released, offline).
func (b Builder) Released(ctx context.Context, p Program, offline bool) (string, error) {
	if bin, _ := b.ReleaseCached(p); bin != "" {
		return bin, nil
	}
	if bin, err := b.Beside(p); err != nil || bin != "" {
		return bin, err
	}
	return b.FetchRelease(ctx, p, offline)
}

// CachedQuick returns a cached build of p when finding it costs no `go list`: a build leaves its
// module set behind (ModuleSetPath), so without one there is no build of these sources to find.
// An installed release looks here before fetching its own archive: on a machine whose Go has an
// empty module cache, working out the module set would download modules first.
func (b Builder) CachedQuick(ctx context.Context, p Program) string {
	file, err := b.ModuleSetPath(p)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(file); err != nil {
		return ""
	}
	bin, _, _, _ := b.Cached(ctx, p) // without Go: a build of these sources by any Go (Any)
	return bin
}
