package clustercmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
)

// TestIntegrationS3StateMigrate: a user moves their records from the directory store to an S3
// store a team shares (SeaweedFS on loopback), resuming a run that was killed after copying one
// record; another user (another HOME) then sees them with who made them and when; a record of the
// same name with other content in the target is refused and left in both stores.
func TestIntegrationS3StateMigrate(t *testing.T) {
	ctx := context.Background()
	bucket := servertest.S3Bucket(t)
	loc := "s3://" + bucket + "/" + servertest.UniqueName()
	alice := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	bob := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	dir := state.Dir{Path: filepath.Join(alice.home, "state")}
	for _, n := range []string{"a1", "a2"} {
		if err := dir.Save(ctx, &state.Record{Name: n, Provider: "local", Phase: state.Running}); err != nil {
			t.Fatal(err)
		}
	}
	if err := (history.Dir{Path: filepath.Join(dir.Path, "history")}).Add(ctx, "local",
		history.Sample{Kind: "control-plane", Action: "create", Seconds: 3, At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	shared, err := stores.Open(loc, alice.home, "")
	if err != nil {
		t.Fatal(err)
	}
	// what a migrate killed after its first copy left: a1 in both stores
	a1, err := dir.Load(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	a1.Generation = 0
	if err := shared.Save(ctx, a1); err != nil {
		t.Fatal(err)
	}

	out, errs, code := alice.run("state", "migrate", "--to", loc)
	if code != 0 || !strings.Contains(out, "moved 1 records from "+dir.Path+" to "+loc+" (1 more had been copied by an interrupted run)") {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errs)
	}
	if recs, _ := dir.List(ctx); len(recs) != 0 {
		t.Fatalf("the directory store still has %d records", len(recs))
	}
	if out, errs, code = alice.run("state", "migrate", "--to", loc); code != 0 || !strings.HasPrefix(out, "moved 0 records") {
		t.Fatalf("migrate again: exit %d\n%s%s", code, out, errs)
	}
	h, _ := history.ForState(shared)
	if samples, err := h.Load(ctx, "local"); err != nil || len(samples) != 1 {
		t.Fatalf("history in the shared store after two migrations: %d samples, %v", len(samples), err)
	}

	out, errs, code = bob.run("state", "list", "--state", loc, "-o", "json")
	var list stateList
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Store != loc || len(list.Records) != 2 {
		t.Fatalf("bob's state list: exit %d\n%s%s", code, out, errs)
	}
	for _, r := range list.Records {
		if !strings.Contains(r.CreatedBy, "@") || r.Created.IsZero() {
			t.Fatalf("record %s does not say who made it and when: %+v", r.Name, r)
		}
	}

	// a3 in both stores, with other content: refused, named, left in both
	if err := dir.Save(ctx, &state.Record{Name: "a3", Provider: "local", Phase: state.Running}); err != nil {
		t.Fatal(err)
	}
	if err := shared.Save(ctx, &state.Record{Name: "a3", Provider: "kind", Phase: state.Running}); err != nil {
		t.Fatal(err)
	}
	out, errs, code = alice.run("state", "migrate", "--to", loc)
	if code != 1 || !strings.Contains(errs, "cluster a3: "+loc+" has another record of that name") {
		t.Fatalf("migrate onto another a3: exit %d\n%s%s", code, out, errs)
	}
	if _, err := dir.Load(ctx, "a3"); err != nil {
		t.Fatalf("a3 left the directory store: %v", err)
	}
	if r, err := shared.Load(ctx, "a3"); err != nil || r.Provider != "kind" {
		t.Fatalf("the shared a3 changed: %+v %v", r, err)
	}
}
