package localkube

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	record "github.com/nuv-dev/nuv/internal/cluster/state"
)

// legacyCluster puts testdata/legacy-state.json (the flat state.json the release before records
// wrote) in place as cluster "old" of home, with its kubeconfig in project.
func legacyCluster(t *testing.T, home, project string) (dir, kubeconfig string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "legacy-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir = StateDir(home, "old")
	kubeconfig = filepath.Join(project, "clusters", "old.kubeconfig")
	for _, d := range []string{filepath.Join(dir, "pids"), filepath.Dir(kubeconfig)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	b = []byte(strings.ReplaceAll(string(b), "KUBECONFIG", kubeconfig))
	if err := os.WriteFile(filepath.Join(dir, StateFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, kubeconfig
}

// TestLegacyStateIsRead: a cluster made by the release whose state.json was a flat object of its
// own (phases "creating"/"created") lists, reports its status, is adopted, stops and is deleted;
// its state reads the same once written back as a record.
func TestLegacyStateIsRead(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	dir, kubeconfig := legacyCluster(t, home, project)
	p := Clusters{Home: home, Project: project}
	ctx := context.Background()

	old, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if old.Phase != record.Running || !old.HA || old.Flavor != "eks" || !old.durable() || old.Nodes != 3 || old.PodCIDR != "10.200.0.0/16" {
		t.Fatalf("legacy state read as %+v", old)
	}
	infos, err := p.List(ctx)
	if err != nil || len(infos) != 1 {
		t.Fatalf("list: %v %+v", err, infos)
	}
	info, err := p.Status(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []cluster.Info{infos[0], info} {
		if i.Name != "old" || i.Status != cluster.Stopped || i.Flavor != "eks" || i.Version != "1.36.3" || !i.HA || i.Nodes != 3 ||
			i.Kubeconfig != kubeconfig || i.APIURL != "https://127.0.0.1:40451" || !strings.HasPrefix(i.Durability, Safe) || i.Err != nil {
			t.Fatalf("status of the legacy cluster: %+v", i)
		}
	}
	c, err := p.Adopt(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.ControlPlane.Count != 3 || Key.Get(c).Durability != Safe || len(c.Spec.NodeGroups) != 2 ||
		c.Spec.NodeGroups[1].Taints[0] != "gpu=true:NoSchedule" || !c.Spec.NodeGroups[1].Spot {
		t.Fatalf("adopted spec: %+v", c.Spec)
	}

	// Written back: a state record, the same cluster when read again.
	if err := saveState(dir, old); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var r record.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Name != "old" || r.Provider != "local" || r.Phase != record.Running || r.Generation != 1 || r.Spec == nil || len(r.Data) == 0 {
		t.Fatalf("written back as %s", b)
	}
	again, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	old.updated, old.generation = again.updated, again.generation
	if !reflect.DeepEqual(old, again) {
		t.Fatalf("read back differs:\n%+v\n%+v", again, old)
	}
	if again.NodeGroups[1].ProviderIDPrefix != "aws:///us-east-1a/" || again.TokenWebhook == "" || again.Ports["lb"] != 40451 {
		t.Fatalf("provider data lost: %+v", again)
	}

	if err := p.Stop(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{dir, kubeconfig} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Fatalf("%s left after delete: %v", f, err)
		}
	}
}
