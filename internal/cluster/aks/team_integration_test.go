package aks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/s3bucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
)

// teamSpec is the cluster two users of one team share: AKS (the emulator) with a day to live.
const teamSpec = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: team}
spec:
  provider: aks
  region: eastus
  kubernetesVersion: "1.36"
  ttl: 24h
  nodeGroups:
  - {name: system, count: 1, instanceType: Standard_D2s_v3}
  aks: {resourceGroup: team-rg, networkPlugin: azure}
`

// teammate is one user of the team: a home, a project with the shared spec, a name.
type teammate struct {
	name, home, project, spec string
	vars                      []string
}

// TestIntegrationTeamSharedStore is a team's day on one s3:// state store (SeaweedFS) and one
// cloud (the Azure emulator), two users with homes and projects of their own: both apply the same
// spec at the same moment and one cluster is made (the other waits its turn, naming the holder,
// and then finds nothing to change); each sees the cluster in `cluster list -o json` and
// `state list` with who made it; once it expired, the other user's `gc --provider aks` (the test
// reaches no other cloud) deletes it, and neither sees it any more.
func TestIntegrationTeamSharedStore(t *testing.T) {
	env, _, _ := azureEnv(t)
	s3 := servertest.S3(t)
	bucket, prefix := servertest.S3Bucket(t), servertest.UniqueName()
	loc := "s3://" + bucket + "/" + prefix
	users := make([]*teammate, 2)
	for i, name := range []string{"alice", "bob"} {
		u := &teammate{name: name, home: t.TempDir(), project: t.TempDir()}
		u.vars = append([]string{"NUV_HOME=" + u.home, "NUV_PROJECT=" + u.project, "NUV_STATE=" + loc, "NUV_LOCK_WAIT=10m", "USER=" + name}, s3.Env()...)
		for k, v := range env {
			u.vars = append(u.vars, k+"="+v)
		}
		u.spec = filepath.Join(u.project, "clusters", "specs", "team.yaml")
		if err := os.MkdirAll(filepath.Dir(u.spec), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(u.spec, []byte(teamSpec), 0o644); err != nil {
			t.Fatal(err)
		}
		users[i] = u
	}
	alice := users[0]
	run := func(u *teammate, args ...string) (string, string, int) {
		t.Helper()
		cmd := clustertest.Command(asNuv, u.vars, append([]string{"cluster"}, args...)...)
		cmd.Dir = u.project
		return clustertest.Output(t, cmd)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			run(alice, "delete", "--yes", "team")
		}
	})

	// Two applies of one spec at the same moment.
	type result struct {
		out, errs string
		code      int
	}
	results := make([]result, 2)
	done := make(chan int, 2)
	t0 := time.Now()
	for i, u := range users {
		cmd := clustertest.Command(asNuv, u.vars, "cluster", "apply", "--yes", "-f", u.spec)
		cmd.Dir = u.project
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			err := cmd.Wait()
			code := 0
			if err != nil {
				code = cmd.ProcessState.ExitCode()
			}
			results[i] = result{out.String(), errs.String(), code}
			done <- i
		}()
	}
	<-done
	<-done
	waited := -1
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("%s's apply: exit %d\n%s%s", users[i].name, r.code, r.out, r.errs)
		}
		if strings.Contains(r.errs, "which holds the lock of cluster team") {
			waited = i
		}
	}
	if waited < 0 {
		t.Fatalf("neither apply waited for the other's lock:\nalice:\n%s%s\nbob:\n%s%s", results[0].out, results[0].errs, results[1].out, results[1].errs)
	}
	maker, waiter := users[1-waited], users[waited]
	if w := results[waited].errs; !strings.Contains(w, `"nuv cluster apply`) || !strings.Contains(w, "pid ") {
		t.Errorf("%s's wait does not name the holder (its command and pid):\n%s", waiter.name, w)
	}
	if !strings.Contains(results[waited].out, "cluster team: no changes") && strings.Contains(results[waited].out, "create managed-cluster/team") {
		t.Errorf("%s's apply made the cluster again after its wait:\n%s", waiter.name, results[waited].out)
	}
	t.Logf("two applies at once: %s made the cluster, %s waited; both done in %.1fs", maker.name, waiter.name, time.Since(t0).Seconds())
	st, err := os.ReadFile(filepath.Join(caDir(env), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(st), `"name": "team"`); n != 1 {
		t.Fatalf("the emulator holds %d managed clusters team, want 1", n)
	}

	// Each sees the cluster, and who made it.
	for _, u := range users {
		out, errs, code := run(u, "list", "-o", "json")
		var list []struct {
			Name      string `json:"name"`
			Provider  string `json:"provider"`
			CreatedBy string `json:"createdBy"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
			t.Fatalf("%s: cluster list -o json: exit %d\n%s%s", u.name, code, out, errs)
		}
		found := false
		for _, it := range list {
			if it.Name == "team" {
				found = true
				if it.Provider != "aks" || !strings.HasPrefix(it.CreatedBy, maker.name+"@") {
					t.Errorf("%s sees team as %+v, want provider aks made by %s", u.name, it, maker.name)
				}
			}
		}
		if !found {
			t.Fatalf("%s does not see cluster team:\n%s", u.name, out)
		}
		if out, errs, code := run(u, "state", "list"); code != 0 || !strings.Contains(out, "team") {
			t.Fatalf("%s: state list: exit %d\n%s%s", u.name, code, out, errs)
		}
	}

	// A day later, as far as the record goes: the other user's gc deletes it.
	s3.Setenv(t)
	b, err := s3bucket.New(context.Background(), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	raw, version, err := b.Get(context.Background(), "records/team.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["expiresAt"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	raw, _ = json.Marshal(rec)
	if _, err := b.Put(context.Background(), "records/team.json", raw, objstore.Cond{Version: version}); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(waiter, "gc", "--dry-run", "--provider", "aks")
	if code != 0 || !strings.Contains(out, "would delete") || !strings.Contains(out, "team") {
		t.Fatalf("%s: gc --dry-run: exit %d\n%s%s", waiter.name, code, out, errs)
	}
	if out, errs, code = run(waiter, "gc", "--provider", "aks"); code != 0 {
		t.Fatalf("%s: gc: exit %d\n%s%s", waiter.name, code, out, errs)
	}
	deleted = true
	for _, u := range users {
		if out, errs, code := run(u, "list", "-o", "json"); code != 0 || strings.Contains(out, `"team"`) {
			t.Fatalf("%s still sees team after gc: exit %d\n%s%s", u.name, code, out, errs)
		}
	}
	if st, err := os.ReadFile(filepath.Join(caDir(env), "state.json")); err != nil || strings.Contains(string(st), `"name": "team"`) {
		t.Fatalf("the emulator still holds cluster team after gc (%v)", err)
	}
}
