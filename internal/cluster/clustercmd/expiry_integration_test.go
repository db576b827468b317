package clustercmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIntegrationGC: clusters that expire, on real local clusters. A cluster made with spec.ttl
// shows its expiry in `cluster list`; once it passed (the record is aged here, as hours would),
// `gc --dry-run` names it and changes nothing, two `gc`s at once delete it exactly once (its
// processes, record and kubeconfig gone), and a cluster without ttl, or extended, is left alone.
func TestIntegrationGC(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes") })
	spec := func(name, ttl string) string {
		s := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + name + "\nspec:\n  provider: local\n"
		if ttl != "" {
			s += "  ttl: " + ttl + "\n"
		}
		return s
	}
	f := filepath.Join(t.TempDir(), "specs.yaml")
	if err := os.WriteFile(f, []byte(spec("old", "1h")+"---\n"+spec("keep", "")+"---\n"+spec("later", "2h")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := c.run("apply", "-f", f); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code := c.run("list")
	if code != 0 || !strings.Contains(out, "EXPIRES") || !regexpMatch(`(?m)^old\s.*\sin (\d+m|1h)$`, out) || !regexpMatch(`(?m)^keep\s.*\s-$`, out) {
		t.Fatalf("list: exit %d\n%s%s", code, out, errs)
	}

	// An hour later, as far as the records go.
	age := func(name string, by time.Duration) {
		p := filepath.Join(c.home, "state", name+".json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339, rec["expiresAt"].(string))
		if err != nil {
			t.Fatal(err)
		}
		rec["expiresAt"] = at.Add(-by).Format(time.RFC3339)
		b, _ = json.Marshal(rec)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	age("old", 61*time.Minute)
	age("later", 121*time.Minute)
	if out, errs, code = c.run("extend", "later", "30m"); code != 0 || !strings.Contains(out, "cluster later now expires at ") {
		t.Fatalf("extend: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run("gc", "--dry-run")
	if code != 0 || !regexpMatch(`(?m)^old\s+local\s+\S+Z\s+would delete\s+expired \d+m ago$`, out) || strings.Contains(out, "keep") || strings.Contains(out, "later") ||
		!strings.HasSuffix(out, "gc --dry-run: 1 would be deleted, 0 skipped\n") {
		t.Fatalf("gc --dry-run: exit %d\n%s%s", code, out, errs)
	}
	kubeconfig := filepath.Join(c.project, "clusters", "old.kubeconfig")
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Fatalf("gc --dry-run removed something: %v", err)
	}

	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, e, code := c.run("gc")
			if code != 0 {
				t.Errorf("gc %d: exit %d\n%s%s", i, code, o, e)
			}
			outs[i] = o
		}()
	}
	wg.Wait()
	all := strings.Join(outs, "")
	if len(regexp.MustCompile(`(?m)^old\s+local\s+\S+\s+deleted\s+expired`).FindAllString(all, -1)) != 1 || strings.Contains(all, "keep") || strings.Contains(all, "later") {
		t.Fatalf("two gcs at once:\n%s", all)
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Fatalf("the expired cluster's kubeconfig is still there: %v", err)
	}
	out, errs, code = c.run("list")
	if code != 0 || strings.Contains(out, "old ") || !strings.Contains(out, "keep ") || !strings.Contains(out, "later ") {
		t.Fatalf("list after gc: exit %d\n%s%s", code, out, errs)
	}
	if out, _, code = c.run("gc"); code != 0 || !strings.HasPrefix(out, "no expired clusters in ") {
		t.Fatalf("a gc with nothing to do: exit %d\n%s", code, out)
	}
	if _, errs, code = c.run("extend", "keep", "soon"); code != 2 || !strings.Contains(errs, `"soon" is not a duration`) {
		t.Fatalf("extend with a bad duration: exit %d\n%s", code, errs)
	}
}
