package kube

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestMergeGlobal(t *testing.T) {
	proj := threeClusters(t)
	// A relative certificate path in the project kubeconfig must be embedded, not left relative.
	writeFile(t, proj, "clusters/ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	writeFile(t, proj, "clusters/rel.kubeconfig", strings.Replace(kubeconfigFor("rel", "https://127.0.0.1:7005"), "insecure-skip-tls-verify: true", "certificate-authority: ca.crt", 1))
	cs, _ := ListEnv(proj, envMap(t))
	home := t.TempDir()
	dest := filepath.Join(home, ".kube", "config")
	own := kubeconfigFor("mine", "https://example.invalid:6443")
	writeFile(t, home, ".kube/config", own)

	name, backup, err := MergeGlobal(dest, cs[1]) // b
	if err != nil {
		t.Fatal(err)
	}
	if name != "nuv-b" || backup == "" {
		t.Fatalf("name %q backup %q", name, backup)
	}
	if b, _ := os.ReadFile(backup); string(b) != own {
		t.Errorf("backup differs from the previous content")
	}
	cfg, err := clientcmd.LoadFromFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "nuv-b" || cfg.Contexts["mine"] == nil || cfg.Clusters["mine-cluster"] == nil || cfg.AuthInfos["mine-user"] == nil {
		t.Errorf("existing entries lost or context not current: %+v", cfg)
	}
	if cfg.Clusters["nuv-b"].Server != "https://127.0.0.1:7002" || cfg.AuthInfos["nuv-b"].Token != "s3cret-b" {
		t.Errorf("merged entries wrong")
	}
	if st, _ := os.Stat(dest); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	// Merging again (another cluster, then the same one) keeps everything.
	var rel Cluster
	for _, c := range cs {
		if c.Name == "rel" {
			rel = c
		}
	}
	if _, _, err := MergeGlobal(dest, rel); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeGlobal(dest, cs[1]); err != nil {
		t.Fatal(err)
	}
	cfg, _ = clientcmd.LoadFromFile(dest)
	if len(cfg.Contexts) != 3 || cfg.CurrentContext != "nuv-b" {
		t.Errorf("contexts after three merges: %v current %s", len(cfg.Contexts), cfg.CurrentContext)
	}
	if c := cfg.Clusters["nuv-rel"]; c == nil || len(c.CertificateAuthorityData) == 0 || c.CertificateAuthority != "" {
		t.Errorf("relative CA not embedded: %+v", c)
	}
}

func TestMergeGlobalFreshAndBroken(t *testing.T) {
	proj := threeClusters(t)
	cs, _ := ListEnv(proj, envMap(t))
	home := t.TempDir()
	dest := filepath.Join(home, ".kube", "config")
	if _, backup, err := MergeGlobal(dest, cs[0]); err != nil || backup != "" {
		t.Fatalf("fresh merge: %v backup %q", err, backup)
	}
	broken := []byte("this: [is not yaml")
	if err := os.WriteFile(dest, broken, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeGlobal(dest, cs[0]); err == nil || !strings.Contains(err.Error(), "left untouched") {
		t.Fatalf("broken dest: %v", err)
	}
	if b, _ := os.ReadFile(dest); !bytes.Equal(b, broken) {
		t.Error("broken ~/.kube/config was modified")
	}
}
