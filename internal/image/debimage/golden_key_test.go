package debimage

import (
	"encoding/json"
	"testing"

	"github.com/nuv-dev/nuv/internal/image/buildcache"
)

// Key hashes these parts, in this order (buildcache pins Key itself); sourcesHash follows
// debimage.go by design.
func TestKeyParts(t *testing.T) {
	s := Redis()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Key(s, bookworm, "amd64"), buildcache.Key("debimage", "debimage-v1", string(b), bookworm.Suite, bookworm.Mirror, "amd64", sourcesHash()); got != want {
		t.Errorf("Key = %s, want %s", got, want)
	}
}
