// Package objstoretest is the conformance suite of objstore.Bucket implementations: what the state
// store's locking rules rely on. Objects round-trip with a version; a write only if absent fails
// on an existing object, and of many at once exactly one wins; a write only at a version fails
// once the object moved on, and of many based on the same version exactly one wins; a delete at a
// version removes only that version; a failed write or delete leaves the object as it was; List
// returns the keys under a prefix, sorted.
//
// Run it against a real server: objstoretest.Run(t, bucket). The suite writes under a key prefix
// of its own (objstoretest-RANDOM/), so it may share a bucket with other tests.
package objstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
)

// Contenders is how many writers race in the concurrency cases.
const Contenders = 8

// Run runs the suite against b.
func Run(t *testing.T, b objstore.Bucket) {
	ctx := context.Background()
	p := prefix()
	if b.Where() == "" {
		t.Error("Where is empty")
	}
	if err := b.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Run("round trip", func(t *testing.T) {
		k := p + "rt/a.json"
		if _, _, err := b.Get(ctx, k); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("Get of a missing object: %v, want ErrNotFound", err)
		}
		big := bytes.Repeat([]byte("0123456789abcdef\n"), 20000) // 340 kB
		v1, err := b.Put(ctx, k, big, objstore.Cond{})
		if err != nil || v1 == "" {
			t.Fatalf("Put: version %q, %v", v1, err)
		}
		mustGet(t, b, k, big, v1)
		v2, err := b.Put(ctx, k, []byte("second"), objstore.Cond{})
		if err != nil || v2 == "" || v2 == v1 {
			t.Fatalf("an unconditional Put over an object: version %q (was %q), %v", v2, v1, err)
		}
		mustGet(t, b, k, []byte("second"), v2)
	})
	t.Run("absent", func(t *testing.T) {
		k := p + "absent/a.json"
		v, err := b.Put(ctx, k, []byte("first"), objstore.Cond{Absent: true})
		if err != nil || v == "" {
			t.Fatalf("Put if absent of a new object: %q %v", v, err)
		}
		if _, err := b.Put(ctx, k, []byte("second"), objstore.Cond{Absent: true}); !errors.Is(err, objstore.ErrPrecondition) {
			t.Fatalf("Put if absent over an object: %v, want ErrPrecondition", err)
		}
		mustGet(t, b, k, []byte("first"), v)
	})
	t.Run("version", func(t *testing.T) {
		k := p + "version/a.json"
		v1, err := b.Put(ctx, k, []byte("one"), objstore.Cond{Absent: true})
		if err != nil {
			t.Fatal(err)
		}
		v2, err := b.Put(ctx, k, []byte("two"), objstore.Cond{Version: v1})
		if err != nil || v2 == v1 {
			t.Fatalf("Put at the current version: %q (was %q) %v", v2, v1, err)
		}
		if _, err := b.Put(ctx, k, []byte("three"), objstore.Cond{Version: v1}); !errors.Is(err, objstore.ErrPrecondition) {
			t.Fatalf("Put at an old version: %v, want ErrPrecondition", err)
		}
		mustGet(t, b, k, []byte("two"), v2)
		if _, err := b.Put(ctx, p+"version/missing.json", []byte("x"), objstore.Cond{Version: v2}); !errors.Is(err, objstore.ErrPrecondition) {
			t.Fatalf("Put at a version of a missing object: %v, want ErrPrecondition", err)
		}
		if _, _, err := b.Get(ctx, p+"version/missing.json"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("a refused Put created the object: %v", err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		k := p + "delete/a.json"
		if err := b.Delete(ctx, k, ""); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("Delete of a missing object: %v, want ErrNotFound", err)
		}
		v1, err := b.Put(ctx, k, []byte("one"), objstore.Cond{})
		if err != nil {
			t.Fatal(err)
		}
		v2, err := b.Put(ctx, k, []byte("two"), objstore.Cond{Version: v1})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Delete(ctx, k, v1); !errors.Is(err, objstore.ErrPrecondition) {
			t.Fatalf("Delete at an old version: %v, want ErrPrecondition", err)
		}
		mustGet(t, b, k, []byte("two"), v2)
		if err := b.Delete(ctx, k, v2); err != nil {
			t.Fatalf("Delete at the current version: %v", err)
		}
		if _, _, err := b.Get(ctx, k); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("after Delete: %v", err)
		}
		if _, err := b.Put(ctx, k, []byte("three"), objstore.Cond{Absent: true}); err != nil {
			t.Fatalf("Put if absent after Delete: %v", err)
		}
		if err := b.Delete(ctx, k, ""); err != nil {
			t.Fatalf("Delete of any version: %v", err)
		}
	})
	t.Run("list", func(t *testing.T) {
		keys := []string{"list/b.json", "list/a.json", "list/sub/c.json", "list/a.json.x", "other/a.json", "listing.json"}
		for _, k := range keys {
			if _, err := b.Put(ctx, p+k, []byte(k), objstore.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.List(ctx, p+"list/")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{p + "list/a.json", p + "list/a.json.x", p + "list/b.json", p + "list/sub/c.json"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("List(%q) = %q, want %q", p+"list/", got, want)
		}
		if got, err := b.List(ctx, p+"nothing/"); err != nil || len(got) != 0 {
			t.Fatalf("List of an empty prefix: %q %v", got, err)
		}
	})
	t.Run("many creators, one wins", func(t *testing.T) {
		for round := 0; round < 5; round++ {
			k := fmt.Sprintf("%srace-absent/%d.json", p, round)
			wins, data := race(t, func(i int, body []byte) (string, error) {
				return b.Put(ctx, k, body, objstore.Cond{Absent: true})
			})
			if len(wins) != 1 {
				t.Fatalf("round %d: %d of %d writes if absent succeeded, want exactly one", round, len(wins), Contenders)
			}
			mustGet(t, b, k, data[wins[0]], "")
		}
	})
	t.Run("many writers at one version, one wins", func(t *testing.T) {
		for round := 0; round < 5; round++ {
			k := fmt.Sprintf("%srace-version/%d.json", p, round)
			base, err := b.Put(ctx, k, []byte("base"), objstore.Cond{})
			if err != nil {
				t.Fatal(err)
			}
			wins, data := race(t, func(i int, body []byte) (string, error) {
				return b.Put(ctx, k, body, objstore.Cond{Version: base})
			})
			if len(wins) != 1 {
				t.Fatalf("round %d: %d of %d writes at one version succeeded, want exactly one", round, len(wins), Contenders)
			}
			mustGet(t, b, k, data[wins[0]], "")
		}
	})
}

// race runs Contenders puts at once (each with a body of its own) and returns who succeeded;
// every other one must fail with ErrPrecondition.
func race(t *testing.T, put func(i int, body []byte) (string, error)) ([]int, [][]byte) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, Contenders)
	data := make([][]byte, Contenders)
	for i := range data {
		data[i] = []byte(fmt.Sprintf("contender %d %s", i, prefix()))
	}
	for i := 0; i < Contenders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = put(i, data[i])
		}()
	}
	close(start)
	wg.Wait()
	var wins []int
	for i, err := range errs {
		switch {
		case err == nil:
			wins = append(wins, i)
		case !errors.Is(err, objstore.ErrPrecondition):
			t.Errorf("contender %d: %v, want success or ErrPrecondition", i, err)
		}
	}
	return wins, data
}

func mustGet(t *testing.T, b objstore.Bucket, key string, want []byte, version string) {
	t.Helper()
	got, v, err := b.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get %s: %d bytes %.40q, want %d bytes %.40q", key, len(got), got, len(want), want)
	}
	if version != "" && v != version {
		t.Fatalf("Get %s: version %q, want %q", key, v, version)
	}
}

// CheckMissing asserts that Check of b, a bucket that does not exist, fails with an error naming
// it (name: the bucket's or container's name).
func CheckMissing(t *testing.T, b objstore.Bucket, name string) {
	t.Helper()
	err := b.Check(context.Background())
	if err == nil {
		t.Fatalf("Check of the missing bucket %s succeeded", name)
	}
	if !strings.Contains(err.Error(), name) {
		t.Fatalf("Check of a missing bucket: %v (does not name %s)", err, name)
	}
}

func prefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "objstoretest-" + hex.EncodeToString(b[:]) + "/"
}
