package clustertest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// GCCloud is one cloud provider's emulator as TestGCByTag drives it: nuv run against it with a
// NUV_HOME of the test's choosing (one state store each), and the cloud's own API (its SDK) to
// read and change the tags of a cluster's main resource, as another tool or time would.
type GCCloud interface {
	// Provider is the provider's name.
	Provider() string
	// Spec is the spec file of a small cluster called name with spec.ttl ttl.
	Spec(t *testing.T, name, ttl string) string
	// Nuv runs `nuv ARGS` in its own process with NUV_HOME=home.
	Nuv(t *testing.T, home string, args ...string) (stdout, stderr string, code int)
	// Marks reads nuv's marks from the main resource of cluster name (the tags or labels AWS,
	// Azure or Google report); ok is false when the cluster is gone.
	Marks(t *testing.T, name string) (m spec.Marks, ok bool)
	// Expire sets the expiry mark of cluster name to at through the cloud's API.
	Expire(t *testing.T, name string, at time.Time)
	// Untag removes (on false: restores) nuv's cluster tag on cluster name's main resource.
	Tag(t *testing.T, name string, on bool)
}

type gcReport struct {
	Clusters []struct {
		Name, Provider, Result, Reason string
	}
	Deleted, Skipped, Failed int
}

// GCByTag is the gc test every cloud provider runs in its emulator: two state stores (two
// NUV_HOMEs: owners "mine" and "theirs") each make a cluster with ttl 1h, which carries the
// expiry and the owner as tags; extend moves the tag; the record of "mine" is lost, and gc finds
// it by tag but leaves it while it is not expired; once both clusters' tags say expired, gc
// deletes "mine" (two gcs at once: once) and leaves "theirs" (another owner; and, untagged, does
// not even list it); the other store then deletes its own.
func GCByTag(t *testing.T, cl GCCloud) {
	mineHome, theirHome := t.TempDir(), t.TempDir()
	p := cl.Provider()
	mine, theirs := "gc-"+p+"-mine", "gc-"+p+"-theirs"
	t.Cleanup(func() {
		cl.Nuv(t, theirHome, "cluster", "delete", "--yes", theirs)
		cl.Nuv(t, mineHome, "cluster", "delete", "--yes", mine)
	})
	nuv := func(home string, args ...string) string {
		t.Helper()
		out, errs, code := cl.Nuv(t, home, args...)
		if code != 0 {
			t.Fatalf("nuv %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	gc := func(args ...string) gcReport {
		t.Helper()
		var r gcReport
		out := nuv(mineHome, append([]string{"cluster", "gc", "-o", "json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("gc -o json: %v\n%s", err, out)
		}
		return r
	}
	nuv(mineHome, "cluster", "apply", "--yes", "-f", cl.Spec(t, mine, "1h"))
	nuv(theirHome, "cluster", "apply", "--yes", "-f", cl.Spec(t, theirs, "1h"))

	mm, ok := cl.Marks(t, mine)
	tm, _ := cl.Marks(t, theirs)
	if !ok || mm.ExpiresAt == nil || !mm.ExpiresAt.Equal(recordExpiry(t, mineHome, mine)) || mm.Owner == "" || tm.Owner == "" || mm.Owner == tm.Owner {
		t.Fatalf("marks after create: mine %+v (record: %v), theirs %+v", mm, recordExpiry(t, mineHome, mine), tm)
	}
	out := nuv(mineHome, "cluster", "extend", mine, "2h")
	if mm, _ = cl.Marks(t, mine); mm.ExpiresAt == nil || !mm.ExpiresAt.Equal(recordExpiry(t, mineHome, mine)) || time.Until(*mm.ExpiresAt) < 2*time.Hour+50*time.Minute {
		t.Fatalf("marks after extend: %+v (record %v)\n%s", mm, recordExpiry(t, mineHome, mine), out)
	}
	if r := gc(); len(r.Clusters) != 0 {
		t.Fatalf("gc with nothing expired: %+v", r)
	}

	// The machine that made "mine" dies: its record is lost.
	if err := os.Remove(filepath.Join(mineHome, "state", mine+".json")); err != nil {
		t.Fatal(err)
	}
	if res, why := gcFind(gc("--dry-run"), mine); res != "skipped" || !strings.Contains(why, "not expired") {
		t.Fatalf("gc of a lost cluster not expired: %s %q", res, why)
	}
	// Both expire (as hours would).
	past := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	cl.Expire(t, mine, past)
	cl.Expire(t, theirs, past)
	dry := gc("--dry-run")
	if res, why := gcFind(dry, mine); res != "would delete" || !strings.Contains(why, "record lost") {
		t.Fatalf("gc --dry-run of the lost expired cluster: %s %q", res, why)
	}
	if res, why := gcFind(dry, theirs); res != "skipped" || !strings.Contains(why, "owned by another state store") {
		t.Fatalf("gc --dry-run of another store's expired cluster: %s %q", res, why)
	}
	if _, ok := cl.Marks(t, mine); !ok {
		t.Fatal("gc --dry-run deleted the cluster")
	}
	// Without nuv's tag, a cluster is not even looked at.
	cl.Tag(t, theirs, false)
	if res, _ := gcFind(gc("--dry-run"), theirs); res != "" {
		t.Fatalf("gc listed a cluster without nuv's tag: %s", res)
	}
	cl.Tag(t, theirs, true)

	// Two gcs at once: "mine" deleted once, "theirs" left.
	gcTwiceAtOnce(t, cl, mineHome, mine, theirs)
	if _, ok := cl.Marks(t, mine); ok {
		t.Fatal("the lost cluster is still there after gc")
	}
	if _, ok := cl.Marks(t, theirs); !ok {
		t.Fatal("gc deleted the other store's cluster")
	}
	if _, err := os.Stat(filepath.Join(mineHome, "state", mine+".json")); !os.IsNotExist(err) {
		t.Fatalf("gc left a record of the cluster it deleted: %v", err)
	}
	// The other store's gc deletes its own (its record says 1h; its tag, expired, does not count).
	if r := gcIn(t, cl, theirHome); len(r.Clusters) != 0 {
		t.Fatalf("the owner's gc acted on a cluster whose record says it is not expired: %+v", r)
	}
	nuv(theirHome, "cluster", "delete", "--yes", theirs)
	if _, ok := cl.Marks(t, theirs); ok {
		t.Fatal("the other store's cluster is still there after its delete")
	}
}

// recordExpiry is the expiry the state record of cluster name under home says.
func recordExpiry(t *testing.T, home, name string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "state", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ ExpiresAt time.Time }
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.ExpiresAt
}

// gcFind is what a gc report says it did with cluster name, and why ("" when it does not list it).
func gcFind(r gcReport, name string) (result, reason string) {
	for _, c := range r.Clusters {
		if c.Name == name {
			return c.Result, c.Reason
		}
	}
	return "", ""
}

// gcTwiceAtOnce runs two gcs of home at once: the expired cluster mine, whose record is lost, is
// deleted by exactly one of them; theirs, another store's, is skipped by both.
func gcTwiceAtOnce(t *testing.T, cl GCCloud, home, mine, theirs string) {
	t.Helper()
	reports := make([]gcReport, 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range reports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, stderr, code := cl.Nuv(t, home, "cluster", "gc", "-o", "json")
			if code != 0 {
				errs[i] = errors.New(out + stderr)
				return
			}
			errs[i] = json.Unmarshal([]byte(out), &reports[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent gcs: %v", err)
	}
	deleted := 0
	for _, r := range reports {
		if res, _ := gcFind(r, mine); res == "deleted" {
			deleted++
		}
		if res, _ := gcFind(r, theirs); res != "skipped" {
			t.Errorf("a gc did %q with the other store's cluster: %+v", res, r)
		}
	}
	if deleted != 1 {
		t.Fatalf("two gcs at once deleted the lost cluster %d times: %+v", deleted, reports)
	}
}

func gcIn(t *testing.T, cl GCCloud, home string) gcReport {
	t.Helper()
	out, errs, code := cl.Nuv(t, home, "cluster", "gc", "-o", "json")
	var r gcReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("gc: exit %d\n%s%s", code, out, errs)
	}
	return r
}
