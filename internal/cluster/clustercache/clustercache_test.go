package clustercache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func infos() []cluster.Info {
	return []cluster.Info{
		{Name: "b", Provider: "eks", Status: cluster.Running, APIURL: "https://127.0.0.1:1", Nodes: 2, NodesReady: 2, Created: t0.Add(-time.Hour),
			Components: []cluster.Component{{Name: "control-plane (ACTIVE)", Running: true}}},
		{Name: "a", Provider: "eks", Status: cluster.Corrupt, NodesReady: -1, Err: errors.New("eks:DescribeCluster a: throttled")},
	}
}

// TestLoad covers fresh, stale, another environment's key, a turned-off cache, no file and a file
// from the future (a clock that jumped).
func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ttl     time.Duration
		saved   time.Time // zero: nothing saved
		loadKey string
		at      time.Time
		ok      bool
	}{
		{"fresh", 5 * time.Minute, t0, "k1", t0.Add(2 * time.Minute), true},
		{"just fresh", 5 * time.Minute, t0, "k1", t0.Add(5 * time.Minute), true},
		{"stale", 5 * time.Minute, t0, "k1", t0.Add(5*time.Minute + time.Second), false},
		{"another environment", 5 * time.Minute, t0, "k2", t0.Add(time.Second), false},
		{"cache off", 0, t0, "k1", t0, false},
		{"nothing saved", 5 * time.Minute, time.Time{}, "k1", t0, false},
		{"saved in the future", 5 * time.Minute, t0.Add(time.Hour), "k1", t0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warned []string
			c := Cache{Dir: t.TempDir(), TTL: tc.ttl, Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}
			if !tc.saved.IsZero() {
				c.Now = func() time.Time { return tc.saved }
				if err := c.Save("eks", "k1", infos()); err != nil {
					t.Fatal(err)
				}
			}
			c.Now = func() time.Time { return tc.at }
			got, ok := c.Load("eks", tc.loadKey)
			if ok != tc.ok {
				t.Fatalf("Load ok = %v, want %v", ok, tc.ok)
			}
			if len(warned) > 0 {
				t.Errorf("warnings on a readable cache: %q", warned)
			}
			if !ok {
				return
			}
			if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
				t.Fatalf("Load = %+v, want a and b (sorted)", got)
			}
			if got[0].Err == nil || got[0].Err.Error() != "eks:DescribeCluster a: throttled" || got[0].Status != cluster.Corrupt {
				t.Errorf("a = %+v, want its error kept as text", got[0])
			}
			b := got[1]
			if !b.CachedAt.Equal(tc.saved) || b.Status != cluster.Running || b.NodesReady != 2 || b.Nodes != 2 || !b.Created.Equal(t0.Add(-time.Hour)) ||
				len(b.Components) != 1 || !b.Components[0].Running {
				t.Errorf("b = %+v, want what was saved with CachedAt %v", b, tc.saved)
			}
			if _, ok := c.Find("eks", tc.loadKey, "b"); !ok {
				t.Error("Find b: not found")
			}
			if _, ok := c.Find("eks", tc.loadKey, "zz"); ok {
				t.Error("Find zz: found")
			}
		})
	}
}

// TestCorruptFileIgnoredWithWarning: a cache file that does not decode is a miss with a warning
// naming it, and the next Save replaces it.
func TestCorruptFileIgnoredWithWarning(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"truncated", `{"key": "k1", "fetched": "2026-12-02T10:00:00Z", "clusters": [`},
		{"not json", "\x00\x01garbage"},
		{"no fetch time", `{"key": "k1", "clusters": []}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warned []string
			c := Cache{Dir: t.TempDir(), TTL: time.Hour, Now: func() time.Time { return t0 },
				Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}
			if err := os.WriteFile(filepath.Join(c.Dir, "gke.json"), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Load("gke", "k1"); ok {
				t.Fatal("Load of a corrupt file: ok")
			}
			if len(warned) != 1 || !strings.Contains(warned[0], filepath.Join(c.Dir, "gke.json")) || !strings.Contains(warned[0], "asking gke again") {
				t.Fatalf("warnings = %q, want one naming the file", warned)
			}
			if err := c.Save("gke", "k1", infos()); err != nil {
				t.Fatal(err)
			}
			if got, ok := c.Load("gke", "k1"); !ok || len(got) != 2 {
				t.Fatalf("Load after Save = %v, %v", got, ok)
			}
		})
	}
}

// TestSaveAtomic0600: the file is 0600 in a 0700 directory, no temporary file is left, and it
// holds no credential (the key is a hash of the environment).
func TestSaveAtomic0600(t *testing.T) {
	home := t.TempDir()
	c := Cache{Dir: Dir(home), TTL: time.Hour}
	secret := "AKIASECRETLOOKINGID1"
	env := map[string]string{"AWS_ACCESS_KEY_ID": secret, "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_REGION": "us-east-1"}
	key := Key("eks", "/p", func(k string) string { return env[k] })
	for range 3 { // an overwrite is a rename too
		if err := c.Save("eks", key, infos()); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(filepath.Join(home, "cache", "clusters", "eks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", st.Mode().Perm())
	}
	if dst, err := os.Stat(c.Dir); err != nil || dst.Mode().Perm() != 0o700 {
		t.Errorf("cache dir: %v %v, want 0700", dst.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(c.Dir)
	if len(entries) != 1 {
		t.Errorf("cache dir holds %d files, want only eks.json (no temporary left)", len(entries))
	}
	data, _ := os.ReadFile(filepath.Join(c.Dir, "eks.json"))
	if strings.Contains(string(data), secret) || strings.Contains(string(data), "s3cr3t") {
		t.Errorf("cache file holds a credential:\n%s", data)
	}
}

// TestKey: the settings that choose the account, region, endpoint or project change the key; the
// secret key and unrelated settings do not.
func TestKey(t *testing.T) {
	base := map[string]string{"AWS_ACCESS_KEY_ID": "AKIA1", "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:5002"}
	key := func(project string, change map[string]string) string {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for k, v := range change {
			env[k] = v
		}
		return Key("eks", project, func(k string) string { return env[k] })
	}
	k0 := key("/p", nil)
	for _, tc := range []struct {
		name    string
		project string
		change  map[string]string
		same    bool
	}{
		{"same", "/p", nil, true},
		{"secret key", "/p", map[string]string{"AWS_SECRET_ACCESS_KEY": "other"}, true},
		{"unrelated", "/p", map[string]string{"AZURE_TENANT_ID": "x"}, true},
		{"region", "/p", map[string]string{"AWS_REGION": "eu-west-1"}, false},
		{"account", "/p", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA2"}, false},
		{"profile", "/p", map[string]string{"AWS_PROFILE": "prod"}, false},
		{"endpoint", "/p", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:5012"}, false},
		{"project", "/q", nil, false},
	} {
		if got := key(tc.project, tc.change) == k0; got != tc.same {
			t.Errorf("%s: same key = %v, want %v", tc.name, got, tc.same)
		}
	}
	if Key("eks", "/p", func(string) string { return "" }) == Key("gke", "/p", func(string) string { return "" }) {
		t.Error("two providers share a key")
	}
}

func TestInvalidate(t *testing.T) {
	c := Cache{Dir: t.TempDir(), TTL: time.Hour}
	for _, p := range []string{"eks", "aks", "gke"} {
		if err := c.Save(p, "k", infos()); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Invalidate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"eks", "aks", "gke"} {
		if _, ok := c.Load(p, "k"); ok {
			t.Errorf("%s still cached after Invalidate", p)
		}
	}
	if err := (Cache{Dir: filepath.Join(c.Dir, "never-made")}).Invalidate(); err != nil {
		t.Errorf("Invalidate without a cache: %v", err)
	}
}

func TestTTLOf(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration
		err  bool
	}{{"", DefaultTTL, false}, {"30s", 30 * time.Second, false}, {"0", 0, false}, {"soon", 0, true}, {"-1m", 0, true}} {
		got, err := TTLOf(func(string) string { return tc.v })
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("TTLOf(%q) = %v, %v", tc.v, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), EnvTTL) {
			t.Errorf("TTLOf(%q): error %q does not name %s", tc.v, err, EnvTTL)
		}
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s ago", 12 * time.Second: "12s ago", 3 * time.Minute: "3m ago", 2 * time.Hour: "2h ago", -time.Second: "0s ago"} {
		if got := Age(t0, t0.Add(d)); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}
