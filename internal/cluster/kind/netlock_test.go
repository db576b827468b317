package kind

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestNetworkLock: creates share the lock on kind's network; the removal, which never waits, is
// refused while any create holds it and allowed once none does.
func TestNetworkLock(t *testing.T) {
	p := &Provider{Getenv: func(k string) string {
		if k == "NUV_CACHE_DIR" {
			return filepath.Join(t.TempDir(), "cache")
		}
		return ""
	}}
	path := p.networkLock()
	create1, err := flock(path, syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	create2, err := flock(path, syscall.LOCK_SH|syscall.LOCK_NB)
	if err != nil {
		t.Fatalf("a second create waits for the first: %v", err)
	}
	for i, release := range []func(){create1, create2} {
		if unlock, err := flock(path, syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			unlock()
			t.Fatalf("the removal got the lock while %d create(s) held it", 2-i)
		}
		release()
	}
	unlock, err := flock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		t.Fatalf("the removal is refused with no create running: %v", err)
	}
	if _, err := flock(path, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		t.Fatal("a create joined the network while it was being removed")
	}
	unlock()
}
