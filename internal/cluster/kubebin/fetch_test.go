package kubebin_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin/kubebintest"
)

var testRelease = kubebin.Release{Kubernetes: "1.36.3", Etcd: "3.6.16", Kwok: "0.8.0"}

// randomBins writes one random file of size bytes per component (downloads are verified, never
// run, in this package's tests; the local package's integration test runs real ones).
func randomBins(t *testing.T, size int) map[string]string {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, c := range kubebin.Components {
		b := make([]byte, size)
		_, _ = rand.Read(b)
		p := filepath.Join(dir, c)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		bins[c] = p
	}
	return bins
}

type fixture struct {
	m      *kubebintest.Mirror
	rel    kubebin.Release
	lay    kubebintest.Layout
	bins   map[string]string
	cache  string
	logBuf *bytes.Buffer
}

func newFixture(t *testing.T, size int) *fixture {
	m := kubebintest.Start(t)
	bins := randomBins(t, size)
	rel, lay := m.FillRelease(t, testRelease, "linux", "amd64", bins)
	return &fixture{m: m, rel: rel, lay: lay, bins: bins, cache: t.TempDir(), logBuf: &bytes.Buffer{}}
}

func (f *fixture) fetcher(t *testing.T, rel kubebin.Release) kubebin.Fetcher {
	client, err := kubebin.NewClient(f.m.CAFile, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	log := cli.NewLogger(f.logBuf, 0)
	return kubebin.Fetcher{
		Downloader: kubebin.Downloader{Client: client, Log: log, Every: time.Nanosecond, Stall: 5 * time.Second},
		Releases:   []kubebin.Release{rel}, Mirrors: f.m.Mirrors(), CacheDir: f.cache, GOOS: "linux", GOARCH: "amd64", Log: log,
	}
}

func (f *fixture) binaryRequests() int {
	n := 0
	for _, p := range f.lay.Binary {
		n += len(f.m.Requests(p))
	}
	return n
}

func TestFetchFromMirror(t *testing.T) {
	f := newFixture(t, 3<<20)
	dir, err := f.fetcher(t, f.rel).Fetch(context.Background(), "v1.36.3")
	if err != nil {
		t.Fatalf("fetch: %v\n%s", err, f.logBuf)
	}
	if want := kubebin.SetDir(f.cache, "1.36.3", "linux", "amd64"); dir != want {
		t.Fatalf("set in %s, want %s", dir, want)
	}
	for _, c := range kubebin.Components {
		if got, want := kubebintest.SHA256(t, filepath.Join(dir, c)), kubebintest.SHA256(t, f.bins[c]); got != want {
			t.Errorf("%s: cached sum %s, want %s", c, got, want)
		}
		if st, err := os.Stat(filepath.Join(dir, c)); err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s not executable: %v", c, err)
		}
	}
	_, origin, ok := kubebin.Cached(f.cache, "1.36.3", "linux", "amd64")
	if !ok || len(origin.Files) != len(kubebin.Components) {
		t.Fatalf("origin %+v ok=%v", origin, ok)
	}
	for _, of := range origin.Files {
		want := f.m.URL + f.lay.Sums[of.Component]
		if of.Component == "kwok" {
			want = kubebin.PinnedByNuv
		}
		if strings.Join(of.Checked, ",") != want {
			t.Errorf("%s checked against %v, want %s", of.Component, of.Checked, want)
		}
	}
	if hosts := origin.Hosts(); len(hosts) != 1 || hosts[0] != f.m.URL {
		t.Errorf("hosts %v", hosts)
	}
	log := f.logBuf.String()
	for _, want := range []string{"downloading Kubernetes 1.36.3 binaries for linux/amd64", "kube-apiserver: 3.1 MB from " + f.m.URL, "MB (", "kube-apiserver: 3.1 MB in", "verified (sha256", "downloaded and verified"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(f.cache, "kubebin", "downloads")); len(entries) != 0 {
		t.Errorf("downloads left behind: %v", entries)
	}
	// Cached: a second fetch asks the mirror nothing.
	before := f.binaryRequests()
	if _, err := f.fetcher(t, f.rel).Fetch(context.Background(), "1.36.3"); err != nil {
		t.Fatal(err)
	}
	if after := f.binaryRequests(); after != before {
		t.Errorf("second fetch made %d binary requests", after-before)
	}
}

func TestFetchResumesAfterDroppedConnection(t *testing.T) {
	f := newFixture(t, 4<<20)
	path := f.lay.Binary["kube-apiserver"]
	f.m.CutNext(path, 1<<20)
	if _, err := f.fetcher(t, f.rel).Fetch(context.Background(), "1.36.3"); err != nil {
		t.Fatalf("fetch: %v\n%s", err, f.logBuf)
	}
	reqs := f.m.Requests(path)
	if len(reqs) != 2 || reqs[0].Range != "" || !strings.HasPrefix(reqs[1].Range, "bytes=") {
		t.Fatalf("requests for %s: %+v", path, reqs)
	}
	off, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(reqs[1].Range, "bytes="), "-"))
	if err != nil || off <= 0 || off > 1<<20 {
		t.Fatalf("resumed at %q, want an offset in (0, 1 MiB]", reqs[1].Range)
	}
	if !strings.Contains(f.logBuf.String(), "resuming at") {
		t.Errorf("no resume line:\n%s", f.logBuf)
	}
	dir := kubebin.SetDir(f.cache, "1.36.3", "linux", "amd64")
	if got, want := kubebintest.SHA256(t, filepath.Join(dir, "kube-apiserver")), kubebintest.SHA256(t, f.bins["kube-apiserver"]); got != want {
		t.Fatalf("resumed file sum %s, want %s", got, want)
	}
}

func TestFetchRefusesTamperedBinary(t *testing.T) {
	f := newFixture(t, 1<<20)
	evil := filepath.Join(t.TempDir(), "kube-scheduler")
	b, _ := os.ReadFile(f.bins["kube-scheduler"])
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(evil, b, 0o755); err != nil {
		t.Fatal(err)
	}
	f.m.Serve(f.lay.Binary["kube-scheduler"], evil)
	_, err := f.fetcher(t, f.rel).Fetch(context.Background(), "1.36.3")
	if err == nil || !strings.Contains(err.Error(), "kube-scheduler") || !strings.Contains(err.Error(), "refused, nothing cached") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(kubebin.SetDir(f.cache, "1.36.3", "linux", "amd64")); !os.IsNotExist(err) {
		t.Fatalf("a set was cached: %v", err)
	}
	partials, _ := filepath.Glob(filepath.Join(f.cache, "kubebin", "downloads", "kube-scheduler*"))
	if len(partials) != 0 {
		t.Fatalf("the tampered file stays in the cache: %v", partials)
	}
	if entries, _ := filepath.Glob(filepath.Join(f.cache, "kubebin", ".tmp-*")); len(entries) != 0 {
		t.Fatalf("temporary set left: %v", entries)
	}
}

func TestFetchRefusesBeforeDownloading(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture) kubebin.Release
		want  []string
	}{
		{"checksum file without the platform", func(t *testing.T, f *fixture) kubebin.Release {
			sums := filepath.Join(t.TempDir(), "SHA256SUMS")
			os.WriteFile(sums, []byte(strings.Repeat("cd", 32)+"  etcd-v3.6.16-darwin-arm64.zip\n"), 0o644)
			f.m.Serve(f.lay.Sums["etcd"], sums)
			return f.rel
		}, []string{"no entry for etcd-v3.6.16-linux-amd64.tar.gz", "does not cover linux/amd64"}},
		{"pin disagrees with the release", func(t *testing.T, f *fixture) kubebin.Release {
			rel := f.rel
			rel.Pins = map[string]string{kubebin.PinKey("kube-apiserver", "linux", "amd64"): strings.Repeat("0", 64)}
			for k, v := range f.rel.Pins {
				rel.Pins[k] = v
			}
			return rel
		}, []string{"kube-apiserver", "nuv pins " + strings.Repeat("0", 64), "kube-apiserver linux/amd64"}},
		{"kwok without a pin", func(t *testing.T, f *fixture) kubebin.Release {
			rel := f.rel
			rel.Pins = nil
			return rel
		}, []string{"kwok", "publishes no checksum file", "no pin for kwok linux/amd64"}},
		{"checksum file not a checksum", func(t *testing.T, f *fixture) kubebin.Release {
			bad := filepath.Join(t.TempDir(), "x.sha256")
			os.WriteFile(bad, []byte("<html>not found</html>\n"), 0o644)
			f.m.Serve(f.lay.Sums["kube-controller-manager"], bad)
			return f.rel
		}, []string{"does not hold a SHA-256"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 64<<10)
			rel := tc.setup(t, f)
			_, err := f.fetcher(t, rel).Fetch(context.Background(), "1.36.3")
			if err == nil {
				t.Fatal("fetch succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := f.binaryRequests(); n != 0 {
				t.Errorf("%d binaries downloaded before the refusal", n)
			}
		})
	}
}

func TestFetchUntrustedMirror(t *testing.T) {
	f := newFixture(t, 64<<10)
	client, err := kubebin.NewClient("", func(string) string { return "" }) // the system roots only: the test CA is unknown
	if err != nil {
		t.Fatal(err)
	}
	fe := f.fetcher(t, f.rel)
	fe.Downloader.Client = client
	_, err = fe.Fetch(context.Background(), "1.36.3")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err = %v", err)
	}
}

func TestFetchUnknownVersionAndPlatform(t *testing.T) {
	f := newFixture(t, 64<<10)
	_, err := f.fetcher(t, f.rel).Fetch(context.Background(), "1.99.0")
	if err == nil || !strings.Contains(err.Error(), `"1.99.0"`) || !strings.Contains(err.Error(), "it has them for 1.36.3") {
		t.Fatalf("unknown version: %v", err)
	}
	fe := f.fetcher(t, f.rel)
	fe.GOOS, fe.GOARCH = "darwin", "arm64"
	_, err = fe.Fetch(context.Background(), "1.36.3")
	if err == nil || !strings.Contains(err.Error(), "Kubernetes publishes no kube-apiserver binary for darwin/arm64") {
		t.Fatalf("darwin: %v", err)
	}
}

func TestFetchStalledMirrorTimesOut(t *testing.T) {
	f := newFixture(t, 64<<10)
	fe := f.fetcher(t, f.rel)
	fe.Downloader.Timeout = 300 * time.Millisecond
	ctx := context.Background()
	f.m.Silence(f.lay.Binary["kwok"]) // a mirror that accepts the request and never answers
	start := time.Now()
	_, err := fe.Fetch(ctx, "1.36.3")
	if err == nil || !strings.Contains(err.Error(), "not finished within 300ms") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("gave up after %s", d)
	}
}

func TestMirrorsFromEnv(t *testing.T) {
	cases := []struct {
		env     map[string]string
		want    kubebin.Mirrors
		wantErr string
	}{
		{nil, kubebin.DefaultMirrors(), ""},
		{map[string]string{"NUV_KUBE_MIRROR": "https://mirror.corp/k8s/"}, kubebin.Mirrors{Kubernetes: "https://mirror.corp/k8s", Etcd: kubebin.DefaultMirrors().Etcd, Kwok: kubebin.DefaultMirrors().Kwok}, ""},
		{map[string]string{"NUV_ETCD_MIRROR": "http://mirror.corp/etcd"}, kubebin.Mirrors{}, `NUV_ETCD_MIRROR="http://mirror.corp/etcd": want an https:// base URL`},
		{map[string]string{"NUV_KWOK_MIRROR": "mirror.corp"}, kubebin.Mirrors{}, `NUV_KWOK_MIRROR="mirror.corp"`},
	}
	for _, tc := range cases {
		got, err := kubebin.MirrorsFromEnv(func(k string) string { return tc.env[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.env, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v", tc.env, got, err)
		}
	}
}

func TestBuildRecordsAndEstimate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "builds.json")
	d, basis := kubebin.ColdEstimate(kubebin.LoadBuildRecords(path), 4)
	if d != kubebin.ReferenceColdBuild/2 || !strings.Contains(basis, "2-core machine") {
		t.Fatalf("reference estimate on 4 cores: %s (%s)", d, basis)
	}
	when := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	// A warm rebuild (few packages) says nothing about a cold one; a cold one is the measure.
	for _, r := range []kubebin.BuildRecord{
		{Packages: 1500, Total: 1600, Seconds: 600, Cores: 2, When: when},
		{Packages: 3, Total: 1600, Seconds: 40, Cores: 2, When: when},
	} {
		if err := kubebin.AppendBuildRecord(path, r); err != nil {
			t.Fatal(err)
		}
	}
	d, basis = kubebin.ColdEstimate(kubebin.LoadBuildRecords(path), 8)
	if d != 150*time.Second || !strings.Contains(basis, "measured here: 1500 packages in 10m0s on 2 cores, 2026-11-30") {
		t.Fatalf("estimate on 8 cores: %s (%s)", d, basis)
	}
	b, _ := os.ReadFile(path)
	var rs []kubebin.BuildRecord
	if json.Unmarshal(b, &rs) != nil || len(rs) != 2 {
		t.Fatalf("records file: %s", b)
	}
}

func TestBuildProgress(t *testing.T) {
	cases := []struct {
		elapsed, compiling time.Duration
		done, stale, total int64
		want               string
	}{
		{10 * time.Second, 0, 0, 0, 0, "10s elapsed, 0 packages compiled (counting the packages to compile)"},
		{30 * time.Second, 5 * time.Second, 10, 400, 1600, "30s elapsed, 10 packages compiled of 400 (1200 cached)"},
		{90 * time.Second, 60 * time.Second, 100, 400, 1600, "1m30s elapsed, 100 packages compiled of 400 (1200 cached); about 3m0s left at this build's pace"},
		{5 * time.Minute, 4 * time.Minute, 400, 400, 1600, "5m0s elapsed, 400 packages compiled of 400: linking"},
	}
	for _, tc := range cases {
		if got := kubebin.BuildProgress(tc.elapsed, tc.compiling, tc.done, tc.stale, tc.total); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestFetchThroughProxy(t *testing.T) {
	f := newFixture(t, 1<<20)
	proxy := kubebintest.StartProxy(t)
	env := map[string]string{"HTTPS_PROXY": proxy.URL}
	client, err := kubebin.NewClient(f.m.CAFile, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	fe := f.fetcher(t, f.rel)
	fe.Downloader.Client = client
	fe.Mirrors = f.m.ProxiedMirrors() // a name only the proxy can resolve
	if _, err := fe.Fetch(context.Background(), "1.36.3"); err != nil {
		t.Fatalf("fetch through the proxy: %v", err)
	}
	if len(proxy.Tunnels()) == 0 {
		t.Fatal("no CONNECT went through the proxy")
	}
	// NO_PROXY exempts the host: it is then looked up directly, and does not resolve.
	env["NO_PROXY"] = kubebintest.ProxiedHost
	client, _ = kubebin.NewClient(f.m.CAFile, func(k string) string { return env[k] })
	fe.Downloader.Client = client
	fe.CacheDir = t.TempDir()
	before := len(proxy.Tunnels())
	if _, err := fe.Fetch(context.Background(), "1.36.3"); err == nil {
		t.Fatal("fetch with NO_PROXY reached a host only the proxy knows")
	}
	if len(proxy.Tunnels()) != before {
		t.Fatal("NO_PROXY host went through the proxy")
	}
}

func TestFetchCheckRefusesSet(t *testing.T) {
	f := newFixture(t, 64<<10)
	fe := f.fetcher(t, f.rel)
	var saw []string
	fe.Check = func(dir string) error {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			saw = append(saw, e.Name())
		}
		return errors.New("kube-apiserver --version says v1.35.0, want v1.36.3")
	}
	_, err := fe.Fetch(context.Background(), "1.36.3")
	if err == nil || !strings.Contains(err.Error(), "refused, nothing cached: kube-apiserver --version says v1.35.0") {
		t.Fatalf("err = %v", err)
	}
	if strings.Join(saw, ",") != strings.Join(kubebin.Components, ",") {
		t.Errorf("check saw %v, want every component", saw)
	}
	if _, _, ok := kubebin.Cached(f.cache, "1.36.3", "linux", "amd64"); ok {
		t.Fatal("refused set cached")
	}
}

// A component with nothing to verify a download against (kwok without a pin) is built from source
// while the others download; a failed build caches nothing.
func TestFetchBuildsUnverifiableComponents(t *testing.T) {
	for _, tc := range []struct {
		name     string
		buildErr error
	}{{"build succeeds", nil}, {"build fails", errors.New("go build: exit status 1")}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 64<<10)
			rel := f.rel
			rel.Pins = nil
			fe := f.fetcher(t, rel)
			var asked []string
			fe.Build = func(ctx context.Context, component string) (string, string, error) {
				asked = append(asked, component)
				return f.bins[component], "built from source by a test", tc.buildErr
			}
			dir, err := fe.Fetch(context.Background(), "1.36.3")
			if strings.Join(asked, ",") != "kwok" {
				t.Errorf("built %v, want kwok only", asked)
			}
			if tc.buildErr != nil {
				if err == nil || !strings.Contains(err.Error(), "kwok: go build: exit status 1") {
					t.Fatalf("fetch with a failed build: %v", err)
				}
				if _, _, ok := kubebin.Cached(f.cache, "1.36.3", "linux", "amd64"); ok {
					t.Fatal("a set with a failed build was cached")
				}
				return
			}
			if err != nil {
				t.Fatalf("fetch: %v\n%s", err, f.logBuf)
			}
			if got, want := kubebintest.SHA256(t, filepath.Join(dir, "kwok")), kubebintest.SHA256(t, f.bins["kwok"]); got != want {
				t.Errorf("kwok in the set has sum %s, the build %s", got, want)
			}
			if n := len(f.m.Requests(f.lay.Binary["kwok"])); n != 0 {
				t.Errorf("the unverifiable kwok was downloaded %d times", n)
			}
			_, origin, _ := kubebin.Cached(f.cache, "1.36.3", "linux", "amd64")
			for _, of := range origin.Files {
				if (of.Component == "kwok") != (of.Built != "") || (of.Built != "") == (of.URL != "") {
					t.Errorf("origin of %s: %+v", of.Component, of)
				}
			}
			if !strings.Contains(f.logBuf.String(), "kwok: its release publishes no checksum file") {
				t.Errorf("log does not say why kwok is built:\n%s", f.logBuf)
			}
		})
	}
}
