package kubebin

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Fetcher downloads, verifies and caches the component binaries of one release for one platform.
type Fetcher struct {
	Downloader Downloader
	// Releases is the table of known releases (default Releases()).
	Releases []Release
	Mirrors  Mirrors
	// CacheDir is nuv's cache directory; sets live in <CacheDir>/kubebin/v<version>-<os>-<arch>.
	CacheDir     string
	GOOS, GOARCH string
	Log          cli.Logger
	// Check, when set, runs on the complete set before it is published (the caller asks the binaries
	// their version, say); an error refuses the set.
	Check func(dir string) error
	// Build, when set, makes from source a component whose release publishes no checksum file and
	// for which nuv pins no sum (kwok): nuv never runs an unverified download, and one binary built
	// through the Go module proxy costs a minute or two, not the ten of the whole set. It runs while
	// the other components download and returns the path of the binary (copied into the set) and a
	// line for origin.json saying how it was made. Nil refuses such a component.
	Build func(ctx context.Context, component string) (path, how string, err error)
}

// Origin is recorded in a set's origin.json: where each file came from and the sum it was checked
// against.
type Origin struct {
	Kubernetes string       `json:"kubernetes"`
	Platform   string       `json:"platform"`
	Fetched    time.Time    `json:"fetched"`
	Files      []OriginFile `json:"files"`
}

// OriginFile is one file of a set: downloaded (URL, Checked) or built from source (Built).
type OriginFile struct {
	Component string `json:"component"`
	URL       string `json:"url,omitempty"`
	SHA256    string `json:"sha256"`
	// Checked lists what the sum was verified against: the release's checksum file and/or nuv's pin.
	Checked []string `json:"checked,omitempty"`
	// Built says how a component with nothing to verify a download against was built instead.
	Built string `json:"built,omitempty"`
}

// Hosts returns the distinct hosts (scheme and host) the files came from, for a one-line summary.
func (o Origin) Hosts() []string {
	seen := map[string]bool{}
	var hosts []string
	for _, f := range o.Files {
		if f.URL == "" {
			continue
		}
		h := hostOf(f.URL)
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts
}

const originFile = "origin.json"

// SetDir is where the set of a Kubernetes version for a platform is cached.
func SetDir(cacheDir, version, goos, goarch string) string {
	return filepath.Join(cacheDir, "kubebin", fmt.Sprintf("v%s-%s-%s", strings.TrimPrefix(version, "v"), goos, goarch))
}

// Cached returns the cached set of version for the platform and its origin, if one is complete.
func Cached(cacheDir, version, goos, goarch string) (string, Origin, bool) {
	dir := SetDir(cacheDir, version, goos, goarch)
	o, ok := complete(dir)
	return dir, o, ok
}

func complete(dir string) (Origin, bool) {
	b, err := os.ReadFile(filepath.Join(dir, originFile))
	if err != nil {
		return Origin{}, false
	}
	var o Origin
	if json.Unmarshal(b, &o) != nil {
		return Origin{}, false
	}
	for _, c := range Components {
		st, err := os.Stat(filepath.Join(dir, c))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return Origin{}, false
		}
	}
	return o, true
}

func (f Fetcher) log() cli.Logger {
	if f.Log == nil {
		return cli.Quiet()
	}
	return f.Log
}

// Fetch returns the directory of version's binaries for the fetcher's platform, downloading and
// verifying them first unless they are cached. Nothing reaches the cache unless every file matched
// its sums; a file that does not is deleted and the error names it.
func (f Fetcher) Fetch(ctx context.Context, version string) (string, error) {
	table := f.Releases
	if table == nil {
		table = Releases()
	}
	rel, err := Find(table, version)
	if err != nil {
		return "", err
	}
	arts, err := artifacts(rel, f.Mirrors, f.GOOS, f.GOARCH)
	if err != nil {
		return "", err
	}
	dst := SetDir(f.CacheDir, rel.Kubernetes, f.GOOS, f.GOARCH)
	if _, ok := complete(dst); ok {
		return dst, nil
	}
	downloads := filepath.Join(f.CacheDir, "kubebin", "downloads")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		return "", fmt.Errorf("kubebin cache: %w", err)
	}
	unlock, err := fsutil.Lock(ctx, filepath.Join(f.CacheDir, "kubebin", "fetch.lock"), func() {
		f.log().Infof("waiting for another nuv downloading Kubernetes binaries")
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, ok := complete(dst); ok { // fetched by another nuv while we waited
		return dst, nil
	}
	start := time.Now()
	j := &fetchJob{rel: rel, arts: arts, downloads: downloads, plat: f.GOOS + "/" + f.GOARCH}
	f.log().Infof("downloading Kubernetes %s binaries for %s (etcd %s, kwok %s)", rel.Kubernetes, j.plat, rel.Etcd, rel.Kwok)
	bctx, cancelBuilds := context.WithCancel(ctx)
	defer cancelBuilds()
	if err := f.sumsOrBuilds(ctx, bctx, j); err != nil {
		return "", err
	}
	err = fsutil.PublishDir(dst, 0o755, func(tmp string) error { return f.fill(ctx, j, tmp) },
		func(dir string) bool { _, ok := complete(dir); return ok })
	if err != nil {
		return "", err
	}
	for _, p := range j.partials {
		os.Remove(p)
	}
	f.log().Infof("downloaded and verified Kubernetes %s binaries in %s: %s", rel.Kubernetes, time.Since(start).Round(100*time.Millisecond), dst)
	return dst, nil
}

// fetchJob is one fetch of a release's binaries for a platform: the files, the sum each must
// have, the builds from source under way, and the partial downloads to remove once published.
type fetchJob struct {
	rel       Release
	arts      []artifact
	downloads string // the cache's download directory
	plat      string // GOOS/GOARCH
	sums      []wantSum
	builds    map[int]chan built // by index in arts: the files built from source
	partials  []string
}

// sumsOrBuilds finds the sum of every file first, so a file nuv could not verify is refused
// before anything is downloaded — or, when the fetcher can build, built from source (under bctx)
// while the others download.
func (f Fetcher) sumsOrBuilds(ctx, bctx context.Context, j *fetchJob) error {
	j.sums = make([]wantSum, len(j.arts))
	j.builds = map[int]chan built{}
	for i, a := range j.arts {
		var err error
		j.sums[i], err = f.sumOf(ctx, j.rel, a)
		if errors.Is(err, errUnverifiable) && f.Build != nil {
			f.log().Infof("  %v; building it from source while the others download", err)
			ch := make(chan built, 1)
			j.builds[i] = ch
			go func() {
				var b built
				b.path, b.how, b.err = f.Build(bctx, a.Component)
				ch <- b
			}()
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fill fills the directory tmp, published as the release's cache directory: the downloaded and
// the built files, checked by the fetcher's Check, and the origin file saying where each came from.
func (f Fetcher) fill(ctx context.Context, j *fetchJob, tmp string) error {
	o := Origin{Kubernetes: j.rel.Kubernetes, Platform: j.plat, Fetched: time.Now().UTC()}
	files := make([]OriginFile, len(j.arts))
	for i, a := range j.arts {
		if _, ok := j.builds[i]; ok {
			continue
		}
		of, partial, err := f.fetchOne(ctx, a, j.sums[i], j.downloads, tmp)
		if err != nil {
			return err
		}
		j.partials = append(j.partials, partial)
		files[i] = of
	}
	if err := f.collectBuilds(j, tmp, files); err != nil {
		return err
	}
	o.Files = files
	if f.Check != nil {
		if err := f.Check(tmp); err != nil {
			return fmt.Errorf("downloaded Kubernetes %s binaries refused, nothing cached: %w", j.rel.Kubernetes, err)
		}
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(tmp, originFile), append(b, '\n'), 0o644)
}

// collectBuilds waits for the builds from source and copies each binary into tmp, recording its
// sum and how it was built in files.
func (f Fetcher) collectBuilds(j *fetchJob, tmp string, files []OriginFile) error {
	for i, ch := range j.builds {
		a := j.arts[i]
		if len(ch) == 0 {
			f.log().Infof("  downloads done; waiting for the build of %s", a.Component)
		}
		b := <-ch
		if b.err != nil {
			return fmt.Errorf("%s: %w", a.Component, b.err)
		}
		bin := filepath.Join(tmp, a.Component)
		if err := copyFile(b.path, bin); err != nil {
			return fmt.Errorf("%s: %w", a.Component, err)
		}
		sum, err := fsutil.SHA256File(bin)
		if err != nil {
			return err
		}
		files[i] = OriginFile{Component: a.Component, SHA256: sum, Built: b.how}
	}
	return nil
}

// built is the outcome of Fetcher.Build.
type built struct {
	path, how string
	err       error
}

// errUnverifiable is a component with neither a published checksum file nor a pin: never
// downloaded, built from source where the Fetcher can.
var errUnverifiable = errors.New("its release publishes no checksum file and nuv pins none")

// wantSum is the sum a file must have and what says so.
type wantSum struct {
	sum     string
	checked []string
}

// sumOf reads the sum an artifact must have from its release's checksum file and nuv's pin; both
// must agree, and at least one must exist.
func (f Fetcher) sumOf(ctx context.Context, rel Release, a artifact) (wantSum, error) {
	plat := f.GOOS + "/" + f.GOARCH
	key := PinKey(a.Component, f.GOOS, f.GOARCH)
	pin := strings.ToLower(rel.Pins[key])
	var published string
	var checked []string
	if a.SumsURL != "" {
		b, err := f.Downloader.Small(ctx, a.SumsURL, 1<<20)
		if err != nil {
			return wantSum{}, fmt.Errorf("%s: checksum file: %w", a.Component, err)
		}
		if published, err = parseSum(b, a.SumsName, plat, a.SumsURL); err != nil {
			return wantSum{}, fmt.Errorf("%s: %w", a.Component, err)
		}
		checked = append(checked, a.SumsURL)
	}
	if pin != "" {
		if !isSHA256(pin) {
			return wantSum{}, fmt.Errorf("nuv's pinned checksum for %s is not a SHA-256: %q", key, pin)
		}
		if published != "" && published != pin {
			return wantSum{}, fmt.Errorf("%s: the release's checksum file %s says %s but nuv pins %s for %s: refused (a changed release or a tampered mirror)", a.Component, a.SumsURL, published, pin, key)
		}
		checked = append(checked, PinnedByNuv)
	}
	want := published
	if want == "" {
		want = pin
	}
	if want == "" {
		return wantSum{}, fmt.Errorf("%s: %w (%s has none beside it; no pin for %s): refusing an unverified binary", a.Component, errUnverifiable, a.URL, key)
	}
	return wantSum{sum: want, checked: checked}, nil
}

// PinnedByNuv marks, in OriginFile.Checked, a sum nuv's release table pins.
const PinnedByNuv = "pinned by nuv"

// fetchOne downloads one artifact, checks it has sum w and puts its binary into dir.
func (f Fetcher) fetchOne(ctx context.Context, a artifact, w wantSum, downloads, dir string) (OriginFile, string, error) {
	want, checked := w.sum, w.checked
	partial := filepath.Join(downloads, fmt.Sprintf("%s-%s.partial", path.Base(a.URL), want[:12]))
	t0 := time.Now()
	if err := f.Downloader.Fetch(ctx, a.URL, partial, path.Base(a.URL)); err != nil {
		return OriginFile{}, "", fmt.Errorf("%s: %w", a.Component, err)
	}
	got, err := fsutil.SHA256File(partial)
	if err != nil {
		return OriginFile{}, "", err
	}
	if got != want {
		os.Remove(partial)
		return OriginFile{}, "", fmt.Errorf("%s: %s has SHA-256 %s, but %s says %s: refused, nothing cached", a.Component, a.URL, got, strings.Join(checked, " and "), want)
	}
	bin := filepath.Join(dir, a.Component)
	if a.Member == "" {
		err = copyFile(partial, bin)
	} else {
		err = extract(partial, strings.HasSuffix(a.URL, ".zip"), a.Member, bin)
	}
	if err != nil {
		return OriginFile{}, "", fmt.Errorf("%s: %w", a.Component, err)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		return OriginFile{}, "", err
	}
	size := int64(0)
	if st, err := os.Stat(partial); err == nil {
		size = st.Size()
	}
	f.log().Infof("  %s: %s in %s, verified (sha256 %s…)", path.Base(a.URL), mb(size), time.Since(t0).Round(100*time.Millisecond), want[:16])
	return OriginFile{Component: a.Component, URL: a.URL, SHA256: want, Checked: checked}, partial, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFrom(in, dst)
}

func writeFrom(r io.Reader, dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// extract writes the archive member of a .tar.gz (or a .zip) to dst.
func extract(archive string, isZip bool, member, dst string) error {
	if isZip {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			return fmt.Errorf("open %s: %w", archive, err)
		}
		defer zr.Close()
		for _, zf := range zr.File {
			if zf.Name == member {
				rc, err := zf.Open()
				if err != nil {
					return err
				}
				defer rc.Close()
				return writeFrom(rc, dst)
			}
		}
		return fmt.Errorf("archive %s has no %s", archive, member)
	}
	fh, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		return fmt.Errorf("open %s: %w", archive, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("archive %s has no %s", archive, member)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", archive, err)
		}
		if strings.TrimPrefix(h.Name, "./") == member && h.Typeflag == tar.TypeReg {
			return writeFrom(tr, dst)
		}
	}
}
