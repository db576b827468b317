package controlplane

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
)

// TestIntegrationEnsure: Ensure makes a control plane and says where it answers (its CA is the
// kubeconfig's); a control plane whose state.json is in the flat form of the release before
// records (rewritten here from its record) stops, is ensured running again and is deleted.
func TestIntegrationEnsure(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a local control plane; skipped under -short")
	}
	home := t.TempDir()
	m := Manager{Home: home, Log: localtest.Logger(t)}
	ctx := context.Background()
	t.Cleanup(func() { _ = m.Delete(context.Background(), "cp") })
	ep, err := m.Ensure(ctx, Options{Name: "cp", Flavor: "eks", Durability: Safe})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(m.Kubeconfig("cp"))
	if err != nil {
		t.Fatal(err)
	}
	c := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if ep.URL == "" || c.Server != ep.URL || string(c.CertificateAuthorityData) != string(ep.CA) || ep.Kubeconfig != m.Kubeconfig("cp") ||
		ep.Info.Status != cluster.Running || ep.Info.NodesReady != 1 {
		t.Fatalf("endpoint %+v, kubeconfig server %s", ep, c.Server)
	}

	// The same control plane as the release before records wrote it.
	file := filepath.Join(m.Dir("cp"), "state.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Name    string `json:"name"`
		Created string `json:"created"`
		Spec    struct {
			Spec struct {
				KubernetesVersion string         `json:"kubernetesVersion"`
				Local             map[string]any `json:"local"`
			} `json:"spec"`
		} `json:"spec"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	legacy := map[string]any{"name": rec.Name, "provider": "local", "version": rec.Spec.Spec.KubernetesVersion,
		"flavor": rec.Spec.Spec.Local["flavor"], "durability": rec.Spec.Spec.Local["durability"], "nodes": 1,
		"created": rec.Created, "phase": "created", "tokenWebhook": ""}
	for _, k := range []string{"kubeconfig", "apiURL", "binary", "binarySource", "ports"} {
		legacy[k] = rec.Data[k]
	}
	if b, err = json.Marshal(legacy); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	if info, err := m.Status(ctx, "cp"); err != nil || info.Status != cluster.Stopped || info.Flavor != "eks" || info.APIURL != ep.URL {
		t.Fatalf("stopped: %+v %v", info, err)
	}
	again, err := m.Ensure(ctx, Options{Name: "cp"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Info.Status != cluster.Running || again.Info.NodesReady != 1 || string(again.CA) != string(ep.CA) {
		t.Fatalf("ensured again: %+v", again.Info)
	}
	if err := m.Delete(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Dir("cp")); !os.IsNotExist(err) {
		t.Fatalf("left after delete: %v", err)
	}
}
