// Package clustercache keeps the cloud providers' last answers to `nuv cluster list` on disk, so
// the daily verbs (`nuv cluster list`, `nuv cluster status NAME`) do not ask AWS, Azure or Google
// on every call: an answer younger than the cache's time to live is shown with its age ("running
// (2m ago)"), an older one is asked again, and `--refresh` always asks.
//
// One file per provider, <NUV_HOME>/cache/clusters/<provider>.json, mode 0600, written atomically
// (a reader never sees half a file). It holds what `nuv cluster list` prints of the provider's
// clusters and the key of the environment it was asked in: a hash of the settings that choose the
// account, region, endpoint and project (never a credential itself), so switching AWS_PROFILE,
// emulator or project is a miss, not another account's clusters. A file that cannot be read or
// decoded is ignored with a warning and asked again. Every verb that changes clusters drops the
// cache (Invalidate), so a list after a create or delete never shows the world before it.
package clustercache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// EnvTTL names the cache's time to live (a duration; 0 turns the cache off).
const EnvTTL = "NUV_CLUSTER_CACHE_TTL"

// DefaultTTL is how long a cloud's answer is shown without asking again.
const DefaultTTL = 5 * time.Minute

// Cache is the cache of one NUV_HOME.
type Cache struct {
	// Dir holds one file per provider (Dir(home)).
	Dir string
	// TTL is how long an answer is fresh; <= 0: never (Load always misses, Save still writes).
	TTL time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Warn reports a cache file that is ignored (nil: silent).
	Warn func(format string, a ...any)
}

// Dir is the cache directory of the NUV_HOME home.
func Dir(home string) string { return filepath.Join(home, "cache", "clusters") }

// TTLOf returns the time to live getenv sets (EnvTTL), else DefaultTTL.
func TTLOf(getenv func(string) string) (time.Duration, error) {
	v := getenv(EnvTTL)
	if v == "" {
		return DefaultTTL, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 5m (0 turns the cache off)", EnvTTL, v)
	}
	return d, nil
}

// keyVars are, per provider, the settings that choose what its List sees. Only their hash is kept.
var keyVars = map[string][]string{
	"eks": {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EKS", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"},
	"aks": {"AZURE_SUBSCRIPTION_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_AUTHORITY_HOST", "NUV_AZURE_RESOURCE_MANAGER", "AZURE_CONFIG_DIR"},
	"gke": {"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT",
		"CLOUDSDK_CONFIG"},
}

// Key is the key of the environment provider is asked in: a hash of the settings that choose its
// account, region and endpoint, and of the project (where its kubeconfigs are written).
func Key(provider, project string, getenv func(string) string) string {
	h := sha256.New()
	fmt.Fprintf(h, "provider=%s\nproject=%s\n", provider, project)
	for _, k := range keyVars[provider] {
		fmt.Fprintf(h, "%s=%s\n", k, getenv(k))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// file is a cache file.
type file struct {
	Key      string    `json:"key"`
	Fetched  time.Time `json:"fetched"`
	Clusters []entry   `json:"clusters"`
}

// entry is one cluster.Info as stored (its error as text).
type entry struct {
	Name       string              `json:"name"`
	Provider   string              `json:"provider"`
	Status     cluster.Status      `json:"status"`
	APIURL     string              `json:"api,omitempty"`
	Kubeconfig string              `json:"kubeconfig,omitempty"`
	Flavor     string              `json:"flavor,omitempty"`
	Version    string              `json:"version,omitempty"`
	HA         bool                `json:"ha,omitempty"`
	Nodes      int                 `json:"nodes"`
	NodesReady int                 `json:"nodesReady"`
	Created    time.Time           `json:"created"`
	Components []cluster.Component `json:"components,omitempty"`
	Error      string              `json:"error,omitempty"`
}

func (c Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Cache) path(provider string) string { return filepath.Join(c.Dir, provider+".json") }

// Load returns provider's clusters as cached under key, each with CachedAt set to when they were
// asked, if the answer is younger than TTL; ok is false on a miss (no file, another key, stale,
// unreadable: then with a warning).
func (c Cache) Load(provider, key string) (infos []cluster.Info, ok bool) {
	if c.TTL <= 0 {
		return nil, false
	}
	data, err := os.ReadFile(c.path(provider))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	var f file
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err == nil && f.Fetched.IsZero() {
		err = errors.New("no time of fetching")
	}
	if err != nil {
		if c.Warn != nil {
			c.Warn("ignoring the cached %s clusters in %s (%v); asking %s again", provider, c.path(provider), err, provider)
		}
		return nil, false
	}
	if f.Key != key || c.now().Sub(f.Fetched) > c.TTL || f.Fetched.After(c.now().Add(time.Minute)) {
		return nil, false
	}
	infos = make([]cluster.Info, 0, len(f.Clusters))
	for _, e := range f.Clusters {
		i := cluster.Info{Name: e.Name, Provider: e.Provider, Status: e.Status, APIURL: e.APIURL, Kubeconfig: e.Kubeconfig, Flavor: e.Flavor,
			Version: e.Version, HA: e.HA, Nodes: e.Nodes, NodesReady: e.NodesReady, Created: e.Created, Components: e.Components, CachedAt: f.Fetched}
		if e.Error != "" {
			i.Err = errors.New(e.Error)
		}
		infos = append(infos, i)
	}
	return infos, true
}

// Save records provider's clusters as asked now under key (atomically, 0600).
func (c Cache) Save(provider, key string, infos []cluster.Info) error {
	f := file{Key: key, Fetched: c.now().UTC(), Clusters: make([]entry, 0, len(infos))}
	for _, i := range infos {
		e := entry{Name: i.Name, Provider: i.Provider, Status: i.Status, APIURL: i.APIURL, Kubeconfig: i.Kubeconfig, Flavor: i.Flavor,
			Version: i.Version, HA: i.HA, Nodes: i.Nodes, NodesReady: i.NodesReady, Created: i.Created, Components: i.Components}
		if i.Err != nil {
			e.Error = i.Err.Error()
		}
		f.Clusters = append(f.Clusters, e)
	}
	sort.Slice(f.Clusters, func(a, b int) bool { return f.Clusters[a].Name < f.Clusters[b].Name })
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	if err := fsutil.WriteFileAtomic(c.path(provider), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	return nil
}

// Find returns the cluster name among provider's fresh cached clusters (Load's rules).
func (c Cache) Find(provider, key, name string) (cluster.Info, bool) {
	infos, ok := c.Load(provider, key)
	if !ok {
		return cluster.Info{}, false
	}
	for _, i := range infos {
		if i.Name == name {
			return i, true
		}
	}
	return cluster.Info{}, false
}

// Invalidate drops every provider's cached answer (after a verb that changed clusters).
func (c Cache) Invalidate() error {
	entries, err := os.ReadDir(c.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			if err := os.Remove(filepath.Join(c.Dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cluster cache: %w", errors.Join(errs...))
	}
	return nil
}

// Age is how long ago at was, as `nuv cluster list` shows a cached answer: "12s ago", "3m ago".
func Age(at, now time.Time) string {
	d := now.Sub(at)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh ago", int(d.Hours()))
}
