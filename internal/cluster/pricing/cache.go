package pricing

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// DefaultMaxAge is how long a cached price is used before the API is asked again: clouds change
// their list prices rarely, and the plan says how old a cached price is.
const DefaultMaxAge = 24 * time.Hour

// Cache keeps the price APIs' answers in one JSON file (0600, replaced atomically), each with the
// time the API gave it. A nil *Cache keeps nothing.
type Cache struct {
	// Path is the file ($NUV_HOME/cache/prices.json).
	Path string
	// MaxAge is how long an answer is used (default DefaultMaxAge).
	MaxAge time.Duration

	mu sync.Mutex
}

// CachePath is the cache file under nuv's home.
func CachePath(home string) string { return filepath.Join(home, "cache", "prices.json") }

type cacheFile struct {
	Prices map[string]Price `json:"prices"`
}

func (c *Cache) read() cacheFile {
	var f cacheFile
	if b, err := os.ReadFile(c.Path); err == nil {
		_ = json.Unmarshal(b, &f) // a damaged cache is an empty one: the APIs are asked again
	}
	if f.Prices == nil {
		f.Prices = map[string]Price{}
	}
	return f
}

// get returns the cached price of key if it is younger than MaxAge.
func (c *Cache) get(key string, now time.Time) (Price, bool) {
	if c == nil {
		return Price{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.read().Prices[key]
	maxAge := c.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if !ok || now.Sub(p.At) > maxAge || p.At.After(now.Add(time.Minute)) {
		return Price{}, false
	}
	return p, true
}

// put adds answers to the file; a cache that cannot be written costs the next plan a lookup,
// nothing more.
func (c *Cache) put(prices map[string]Price) {
	if c == nil || len(prices) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.read()
	for k, p := range prices {
		f.Prices[k] = p
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return
	}
	_ = fsutil.WriteFileAtomic(c.Path, append(b, '\n'), 0o600)
}
