package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/version"
)

// pauseArchive is the companion archive of the tests: nuv-pause alone, a Kubernetes program of
// the companion build that compiles in seconds (nuv-kube and nuv-node are a cold build of 2,680
// packages, the work of `task release`, not of a test).
var pauseArchive = companion.ReleaseArchive{Name: "nuv-pause", Programs: []companion.Program{companion.ProgramPause}}

// stampedProgram stands in for nuv's programs: it prints what the release compiled in.
var stampedProgram = Program{Name: "nuv", Package: "./internal/release/testdata/stamped"}

// TestCompanionRelease builds a release with a companion archive through the release code, twice
// (byte-identical), checks that the release's program carries the archive's SHA-256, then has
// nuv's companion code (with the sums that program prints) fetch the archive from a loopback
// mirror of dist/, verify and unpack it into a scratch cache, and refuse a tampered archive,
// another release's archive, a missing one, and fetch nothing where it has no sum.
func TestCompanionRelease(t *testing.T) {
	ctx := context.Background()
	dir := moduleDir(t)
	stamp, err := Describe(ctx, dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	build := func(s Stamp) *Result {
		t.Helper()
		res, err := Build(ctx, Config{Dir: dir, Out: t.TempDir(), Stamp: s, Platforms: []Platform{Host()},
			Programs: []Program{stampedProgram}, Companions: []companion.ReleaseArchive{pauseArchive}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.Cleanup)
		return res
	}
	first, second := build(stamp), build(stamp)
	if len(first.Companions) != 1 || len(first.Archives) != 1 {
		t.Fatalf("built %d companion and %d nuv archives, want 1 and 1", len(first.Companions), len(first.Archives))
	}
	comp := first.Companions[0]
	host := Host()
	if got, want := filepath.Base(comp.Path), pauseArchive.FileName(stamp.Version, host.OS, host.Arch); got != want {
		t.Errorf("companion archive %s, want %s", got, want)
	}
	for _, pair := range [][2]string{
		{comp.Path, second.Companions[0].Path},
		{comp.SBOM, second.Companions[0].SBOM},
		{first.Archives[0].Path, second.Archives[0].Path},
		{first.Checksums, second.Checksums},
	} {
		if !bytes.Equal(readFile(t, pair[0]), readFile(t, pair[1])) {
			t.Errorf("%s differs between two builds of one commit", filepath.Base(pair[0]))
		}
	}
	checkChecksums(t, first.Checksums, []string{comp.Path, comp.SBOM, first.Archives[0].Path, first.Archives[0].SBOM})
	files := checkArchiveFiles(t, comp.Path, []string{"nuv-pause"})
	wantSum := fileSum(t, comp.Path)

	// The release's program was built after the companion and carries its checksum.
	out, err := exec.Command(first.Archives[0].Binaries[0].Path).Output()
	if err != nil {
		t.Fatal(err)
	}
	stamped := strings.TrimSpace(string(out))
	if want := version.CompanionKey("nuv-pause", host.OS, host.Arch) + "=" + wantSum; stamped != want {
		t.Fatalf("the release's program has Companions %q, want %q", stamped, want)
	}
	sums, err := version.ParseCompanions(stamped)
	if err != nil {
		t.Fatal(err)
	}

	// Another release's archive of the same program: same name scheme, other bytes.
	other := build(Stamp{Version: "9.9.9", Commit: stamp.Commit, Epoch: stamp.Epoch + 86400})
	otherMirror := t.TempDir()
	copyFile(t, other.Companions[0].Path, filepath.Join(otherMirror, filepath.Base(comp.Path)))
	tampered := t.TempDir()
	data := readFile(t, comp.Path)
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(filepath.Join(tampered, filepath.Base(comp.Path)), data, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, mirror string
		sums         map[string]string
		offline      bool
		requests     int64  // requests the fetch makes
		refused      bool   // companion.ErrRefused
		wantErr      string // "" succeeds; else a substring of the error
		none         bool   // nothing fetched, no error
	}{
		{name: "fetched, verified, unpacked", mirror: filepath.Dir(comp.Path), sums: sums, requests: 1},
		{name: "tampered archive", mirror: tampered, sums: sums, requests: 1, refused: true,
			wantErr: filepath.Base(comp.Path) + " from http://"},
		{name: "another release's archive under this name", mirror: otherMirror, sums: sums, requests: 1, refused: true,
			wantErr: "was released with " + wantSum},
		{name: "missing on the mirror", mirror: t.TempDir(), sums: sums, requests: 1, wantErr: "404"},
		{name: "a build that was not released", mirror: filepath.Dir(comp.Path), none: true},
		{name: "offline", mirror: filepath.Dir(comp.Path), sums: sums, offline: true, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int64
			fsrv := http.FileServer(http.Dir(tc.mirror))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				fsrv.ServeHTTP(w, r)
			}))
			defer srv.Close()
			cache := t.TempDir()
			env := map[string]string{"NUV_CACHE_DIR": cache, "HOME": t.TempDir(), companion.EnvReleaseMirror: srv.URL + "/"}
			b := companion.Builder{Getenv: func(k string) string { return env[k] }, Release: &companion.Release{
				Version: stamp.Version, Sums: tc.sums, Archives: []companion.ReleaseArchive{pauseArchive}, Beside: []string{}}}
			bin, err := b.Released(ctx, companion.ProgramPause, tc.offline)
			if got := requests.Load(); got != tc.requests {
				t.Errorf("%d requests to the mirror, want %d", got, tc.requests)
			}
			switch {
			case tc.none:
				if err != nil || bin != "" {
					t.Fatalf("Released = %q, %v; want nothing", bin, err)
				}
				checkCacheHolds(t, cache, nil)
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, companion.ErrRefused) != tc.refused {
					t.Fatalf("Released = %q, %v; want an error with %q (refused: %v)", bin, err, tc.wantErr, tc.refused)
				}
				if tc.refused && !strings.Contains(err.Error(), wantSum) {
					t.Errorf("the refusal does not name the expected sum %s: %v", wantSum, err)
				}
				checkCacheHolds(t, cache, []string{"nuv-pause", "nuv-pause/release.lock"})
			default:
				if err != nil {
					t.Fatal(err)
				}
				relDir := companion.ReleaseDir(cache, pauseArchive, stamp.Version, host.OS, host.Arch)
				if bin != filepath.Join(relDir, "nuv-pause") {
					t.Errorf("Released = %s, want it in %s", bin, relDir)
				}
				if !bytes.Equal(readFile(t, bin), files["nuv-pause"]) || !companion.IsExecutable(bin) {
					t.Errorf("%s is not the archive's nuv-pause, executable", bin)
				}
				rel, _ := filepath.Rel(cache, relDir)
				checkCacheHolds(t, cache, []string{"nuv-pause", "nuv-pause/release.lock", rel, filepath.Join(rel, "nuv-pause"), filepath.Join(rel, "origin.json")})
				again, o := b.ReleaseCached(companion.ProgramPause)
				if again != bin || o.SHA256 != wantSum || o.URL != srv.URL+"/"+filepath.Base(comp.Path) || !strings.Contains(o.Source(), "compiled into nuv "+stamp.Version) {
					t.Errorf("ReleaseCached = %s, %+v", again, o)
				}
				if bin2, err := b.Released(ctx, companion.ProgramPause, false); err != nil || bin2 != bin || requests.Load() != tc.requests {
					t.Errorf("second Released = %s, %v after %d requests: want the cached %s, no request", bin2, err, requests.Load(), bin)
				}
			}
		})
	}

	// Unpacked beside nuv: used when it is a build of this nuv's version, refused otherwise.
	beside := t.TempDir()
	copyFile(t, comp.Binaries[0].Path, filepath.Join(beside, "nuv-pause"))
	theirs, err := version.Of(filepath.Join(beside, "nuv-pause"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		self    version.Build
		dirs    []string
		want    string
		refused bool
	}{
		{name: "same build", self: theirs, dirs: []string{t.TempDir(), beside}, want: filepath.Join(beside, "nuv-pause")},
		{name: "another version", self: version.Build{Version: "9.9.9", Main: "v9.9.9", Revision: strings.Repeat("ab", 20)}, dirs: []string{beside}, refused: true},
		{name: "none beside", self: theirs, dirs: []string{t.TempDir()}},
	} {
		t.Run("beside/"+tc.name, func(t *testing.T) {
			cache := t.TempDir()
			b := companion.Builder{Getenv: func(k string) string { return map[string]string{"NUV_CACHE_DIR": cache}[k] },
				Release: &companion.Release{Version: stamp.Version, Self: tc.self, Archives: []companion.ReleaseArchive{pauseArchive}, Beside: tc.dirs}}
			got, err := b.Released(ctx, companion.ProgramPause, true)
			if tc.refused {
				if !errors.Is(err, companion.ErrRefused) || !strings.Contains(err.Error(), "9.9.9") || !strings.Contains(err.Error(), theirs.String()) {
					t.Fatalf("Released = %q, %v; want a refusal naming both versions", got, err)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("Released = %q, %v; want %q", got, err, tc.want)
			}
			checkCacheHolds(t, cache, nil)
		})
	}
}

// TestSelectCompanions holds -companions to the archives it names.
func TestSelectCompanions(t *testing.T) {
	for _, tc := range []struct {
		list, want, err string
	}{
		{list: "all", want: "nuv-kube,nuv-node,whisk-operator"},
		{list: "none", want: ""},
		{list: "nuv-kube", want: "nuv-kube"},
		{list: "nuv-node, nuv-kube", want: "nuv-node,nuv-kube"},
		{list: "kwok", err: `companion archive "kwok": want all, none or some of nuv-kube, nuv-node, whisk-operator`},
	} {
		got, err := SelectCompanions(tc.list)
		var names []string
		for _, a := range got {
			names = append(names, a.Name)
		}
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("SelectCompanions(%q) error %v, want %q", tc.list, err, tc.err)
			}
		} else if err != nil || strings.Join(names, ",") != tc.want {
			t.Errorf("SelectCompanions(%q) = %v, %v; want %s", tc.list, names, err, tc.want)
		}
	}
}

// TestCompanionPlatforms: nuv-kube and the reference operator go where nuv goes; the node image's programs are linux only,
// on every architecture of the release (a darwin host's containers run in a linux VM).
func TestCompanionPlatforms(t *testing.T) {
	kube, node, operator := companion.ReleaseArchives[0], companion.ReleaseArchives[1], companion.ReleaseArchives[2]
	for _, tc := range []struct {
		a    companion.ReleaseArchive
		ps   []Platform
		want string
	}{
		{kube, DefaultPlatforms, "darwin/amd64,darwin/arm64,linux/amd64,linux/arm64"},
		{node, DefaultPlatforms, "linux/amd64,linux/arm64"},
		{node, []Platform{{"darwin", "arm64"}}, "linux/arm64"},
		{kube, []Platform{{"darwin", "arm64"}}, "darwin/arm64"},
		{operator, DefaultPlatforms, "darwin/amd64,darwin/arm64,linux/amd64,linux/arm64"},
	} {
		if got := platformList(CompanionPlatforms(tc.a, tc.ps)); got != tc.want {
			t.Errorf("%s for %s: %s, want %s", tc.a.Name, platformList(tc.ps), got, tc.want)
		}
	}
}

// TestLdflagsCompanions: the companions' checksums are stamped only when there are some.
func TestLdflagsCompanions(t *testing.T) {
	s := Stamp{Version: "1.2.0", Commit: "abc"}
	if got := Ldflags(s); strings.Contains(got, version.CompanionsVar) {
		t.Errorf("Ldflags without companions = %q", got)
	}
	s.Companions = "nuv-kube_linux_amd64=" + strings.Repeat("0", 64)
	if got, want := Ldflags(s), " -X "+version.CompanionsVar+"="+s.Companions; !strings.HasSuffix(got, want) {
		t.Errorf("Ldflags = %q, want it to end with %q", got, want)
	}
	s.OperatorSources = "0123456789abcdef"
	if got, want := Ldflags(s), " -X "+version.CompanionsVar+"="+s.Companions+" -X "+version.OperatorSourcesVar+"=0123456789abcdef"; !strings.HasSuffix(got, want) {
		t.Errorf("Ldflags = %q, want it to end with %q", got, want)
	}
}

// checkCacheHolds fails unless the cache directory holds exactly want (paths relative to it):
// nothing half-written, no download left behind.
func checkCacheHolds(t *testing.T, cache string, want []string) {
	t.Helper()
	var got []string
	err := filepath.Walk(cache, func(p string, _ os.FileInfo, err error) error {
		if err != nil || p == cache {
			return err
		}
		rel, _ := filepath.Rel(cache, p)
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want = append([]string(nil), want...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the cache holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.WriteFile(dst, readFile(t, src), 0o755); err != nil {
		t.Fatal(err)
	}
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	s, err := fsutil.SHA256File(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkArchiveFiles reads a companion archive: entries names in this order, each a regular file of
// mode 0755 owned by 0:0 without names, no PAX records, and a gzip header without name or time.
func checkArchiveFiles(t *testing.T, path string, names []string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("%s: gzip header name %q, mtime %s: want none", path, gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
		if h.Typeflag != tar.TypeReg || h.Mode != ArchiveMode || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || len(h.PAXRecords) != 0 {
			t.Errorf("%s: entry %s: type %c mode %o owner %d:%d (%q:%q) pax %v", path, h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.PAXRecords)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s: entries %q, want %q", path, got, names)
	}
	return files
}

// TestIsReleaseFileCompanions: a release directory's companion archives and SBOMs are release
// files (replaced by the next build), other names of the companions are not.
func TestIsReleaseFileCompanions(t *testing.T) {
	for name, want := range map[string]bool{
		"nuv-kube_1.0.0_linux_amd64.tar.gz":         true,
		"nuv-kube_1.0.0_darwin_arm64.sbom.json":     true,
		"nuv-node_1.0.0_linux_arm64.tar.gz":         true,
		"whisk-operator_1.0.0_darwin_amd64.tar.gz":  true,
		".nuv-node_1.0.0_linux_arm64.tar.gz.tmp-1":  true,
		"nuv-kube_1.0.0_linux_amd64.tar.gz.tmp1234": true,
		"nuv-kube":                       false,
		"nuv-node_1.0.0_linux_amd64.zip": false,
		"nuv-emulator-notes_1.0.0_linux_amd64.tar.bz2": false,
	} {
		if got := isReleaseFile(name); got != want {
			t.Errorf("isReleaseFile(%q) = %v, want %v", name, got, want)
		}
	}
}
