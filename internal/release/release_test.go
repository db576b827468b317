package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/nuv-dev/nuv/internal/image/imagetest"
	"github.com/nuv-dev/nuv/internal/image/publish"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// moduleDir is nuv's module root, which the release builds from.
func moduleDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func noEnv(string) string { return "" }

// TestReleaseReproducible builds the host's archive of this work tree twice, from the Go build
// cache, into two scratch directories and checks that both are byte-identical, that the archive
// holds nuv's programs as a release should, that checksums.txt is right, and that the SBOM lists
// exactly the modules `go version -m` reads from the programs. It then pushes nuv's image made of
// the same programs to a real registry on loopback and reads it back.
func TestReleaseReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nuv and nuv-full twice")
	}
	ctx := context.Background()
	dir := moduleDir(t)
	stamp, err := Describe(ctx, dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	build := func() (*Result, time.Duration) {
		start := time.Now()
		res, err := Build(ctx, Config{Dir: dir, Out: t.TempDir(), Stamp: stamp, Platforms: []Platform{Host()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.Cleanup)
		return res, time.Since(start)
	}
	first, d1 := build()
	second, d2 := build()
	t.Logf("built %s twice: %s, %s", filepath.Base(first.Archives[0].Path), d1.Round(time.Second), d2.Round(time.Second))

	a := first.Archives[0]
	if want := ArchiveName(stamp.Version, Host()); filepath.Base(a.Path) != want {
		t.Errorf("archive %s, want %s", filepath.Base(a.Path), want)
	}
	for _, pair := range [][2]string{
		{a.Path, second.Archives[0].Path},
		{a.SBOM, second.Archives[0].SBOM},
		{first.Checksums, second.Checksums},
	} {
		b1, b2 := readFile(t, pair[0]), readFile(t, pair[1])
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s differs between two builds of one commit (%d and %d bytes)", filepath.Base(pair[0]), len(b1), len(b2))
		}
	}

	checkChecksums(t, first.Checksums, []string{a.Path, a.SBOM})
	files := checkArchive(t, a.Path, stamp)
	bins := t.TempDir()
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(bins, n), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(filepath.Join(bins, "nuv"), "-version").Output()
	if err != nil {
		t.Fatalf("nuv -version from the archive: %v", err)
	}
	if got, want := string(out), stamp.Version+" commit "+stamp.Commit+"\n"; got != want {
		t.Errorf("nuv -version printed %q, want %q", got, want)
	}
	checkSBOM(t, a.SBOM, a.Path, stamp, bins)

	// Unpacked, the archive's nuv hands over to the nuv-full beside it: no Go, no cache, no build.
	cmd := exec.Command(filepath.Join(bins, "nuv"), "-full")
	cmd.Env = []string{"HOME=" + t.TempDir(), "NUV_CACHE_DIR=" + t.TempDir(), "PATH=/nonexistent"}
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != filepath.Join(bins, "nuv-full")+"\n" {
		t.Errorf("nuv -full from the archive: %v, %q; want %s", err, out, filepath.Join(bins, "nuv-full"))
	}
	// and runs Taskfiles through the nuv-task beside it (a -trimpath build: asked its version once)
	cmd = exec.Command(filepath.Join(bins, "nuv"), "-task", "--version")
	cmd.Env = []string{"HOME=" + t.TempDir(), "NUV_CACHE_DIR=" + t.TempDir(), "PATH=/nonexistent"}
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != strings.TrimPrefix(taskrun.TaskVersion(), "v")+"\n" {
		t.Errorf("nuv -task --version from the archive: %v, %q; want go-task's version", err, out)
	}
	// and `nuv emulator` through the nuv-emulator beside it, run through nuv or nuv-full alike
	// (-trimpath builds too: asked their versions once)
	for _, prog := range []string{"nuv", "nuv-full"} {
		home := t.TempDir()
		cmd = exec.Command(filepath.Join(bins, prog), "emulator", "status")
		cmd.Args[0] = "nuv"
		cmd.Env = []string{"HOME=" + home, "NUV_HOME=" + filepath.Join(home, "nuv"), "NUV_CACHE_DIR=" + t.TempDir(), "PATH=/nonexistent"}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || string(out) != "emulator: stopped\nazure emulator: stopped\nGKE emulator: stopped\n" {
			t.Errorf("%s emulator status from the archive: %v, %q; want exit 1 and the three emulators stopped", prog, err, out)
		}
	}

	// nuv's image, pushed to a real registry on loopback and read back.
	const user, pass = "nuvrelease", "rel-9f3c-Sekret"
	reg := imagetest.StartRegistry(t, user, pass)
	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: user, Password: pass})}
	pushed, err := PushImage(ctx, &publish.Remote{Keychain: kc}, first, stamp, reg.Host+"/tools", "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(pushed)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, remote.WithAuthFromKeychain(kc))
	if err != nil {
		t.Fatalf("read back %s: %v", pushed, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform == nil || im.Manifests[0].Platform.Architecture != Host().Arch {
		t.Fatalf("pushed index manifests %+v, want one for %s", im.Manifests, Host())
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1+len(Programs) || strings.Join(cf.Config.Entrypoint, " ") != "/usr/local/bin/nuv" || !cf.Created.Time.Equal(time.Unix(stamp.Epoch, 0)) {
		t.Errorf("image: %d layers, entrypoint %q, created %s; want %d (base and one per program), /usr/local/bin/nuv, the commit's time", len(layers), cf.Config.Entrypoint, cf.Created, 1+len(Programs))
	}
	again, err := ImageIndex(second, stamp, "")
	if err != nil {
		t.Fatal(err)
	}
	d1x, _ := idx.Digest()
	d2x, _ := again.Digest()
	if d1x != d2x {
		t.Errorf("the image of the second build has digest %s, the pushed one %s", d2x, d1x)
	}
}

type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkChecksums: one line per file, "<sha256>  <name>", sorted by name, each hash right.
func checkChecksums(t *testing.T, path string, files []string) {
	t.Helper()
	var want []string
	for _, f := range files {
		want = append(want, sha(readFile(t, f))+"  "+filepath.Base(f))
	}
	sort.Slice(want, func(i, j int) bool { return want[i][66:] < want[j][66:] })
	if got := string(readFile(t, path)); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("%s:\n%s\nwant:\n%s", path, got, strings.Join(want, "\n"))
	}
}

// checkArchive reads the archive's gzip header and tar entries and returns the files by name.
func checkArchive(t *testing.T, path string, s Stamp) map[string][]byte {
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
	if gz.Name != "" || !gz.ModTime.IsZero() || gz.Comment != "" {
		t.Errorf("gzip header name %q, mtime %s, comment %q: want none", gz.Name, gz.ModTime, gz.Comment)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Typeflag != tar.TypeReg || h.Mode != ArchiveMode || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" ||
			!h.ModTime.Equal(time.Unix(s.Epoch, 0)) || len(h.PAXRecords) != 0 {
			t.Errorf("entry %s: type %c mode %o owner %d:%d (%q:%q) mtime %s pax %v; want a regular file, 0755, 0:0 unnamed, %s",
				h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, h.PAXRecords, time.Unix(s.Epoch, 0).UTC())
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(names, " ") != "nuv nuv-emulator nuv-full nuv-task" {
		t.Errorf("archive entries %q, want nuv nuv-emulator nuv-full nuv-task in this order", names)
	}
	return files
}

// checkSBOM compares the SBOM with the archive and with what `go version -m` reads from each
// program: every dependency module with its version and h1: sum, nothing more.
func checkSBOM(t *testing.T, path, archive string, s Stamp, bins string) {
	t.Helper()
	var doc bom
	if err := json.Unmarshal(readFile(t, path), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.BOMFormat != "CycloneDX" || doc.SpecVersion != "1.5" || !strings.HasPrefix(doc.SerialNumber, "urn:uuid:") {
		t.Errorf("SBOM header %s %s %s", doc.BOMFormat, doc.SpecVersion, doc.SerialNumber)
	}
	if want := time.Unix(s.Epoch, 0).UTC().Format(time.RFC3339); doc.Metadata.Timestamp != want {
		t.Errorf("SBOM timestamp %s, want the commit's %s", doc.Metadata.Timestamp, want)
	}
	if mc := doc.Metadata.Component; mc.Name != filepath.Base(archive) || len(mc.Hashes) != 1 || mc.Hashes[0].Content != sha(readFile(t, archive)) {
		t.Errorf("SBOM subject %+v, want %s with its SHA-256", mc, filepath.Base(archive))
	}
	byRef := map[string]component{}
	for _, c := range doc.Components {
		byRef[c.BOMRef] = c
	}
	deps := map[string][]string{}
	for _, d := range doc.Dependencies {
		deps[d.Ref] = d.DependsOn
	}
	if got := strings.Join(deps["archive"], " "); got != "program:nuv program:nuv-emulator program:nuv-full program:nuv-task" {
		t.Errorf("the archive depends on %q", got)
	}
	for _, prog := range []string{"nuv", "nuv-full", "nuv-task", "nuv-emulator"} {
		bin := filepath.Join(bins, prog)
		pc := byRef["program:"+prog]
		if len(pc.Hashes) != 1 || pc.Hashes[0].Content != sha(readFile(t, bin)) {
			t.Errorf("SBOM component of %s: %+v", prog, pc)
		}
		out, err := exec.Command("go", "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		var want []string
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			sum := ""
			if len(f) > 3 {
				sum = f[3]
			}
			switch f[0] {
			case "dep":
				want = append(want, f[1]+" "+f[2]+" "+sum)
			case "=>": // the replacement stands in for the dep above it
				want[len(want)-1] = f[1] + " " + f[2] + " " + sum
			}
		}
		var got []string
		for _, ref := range deps["program:"+prog] {
			c, ok := byRef[ref]
			if !ok || c.Type != "library" {
				t.Errorf("%s depends on %s, which is no library component", prog, ref)
				continue
			}
			sum := ""
			for _, p := range c.Properties {
				if p.Name == PropModuleSum {
					sum = p.Value
				}
			}
			got = append(got, c.Name+" "+c.Version+" "+sum)
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("SBOM modules of %s:\n%s\ngo version -m:\n%s", prog, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(want) < 2 && prog == "nuv-full" {
			t.Errorf("go version -m lists %d modules for nuv-full", len(want))
		}
	}
}
