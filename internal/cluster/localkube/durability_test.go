package localkube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDurability: a cluster's durability decides whether its etcd fsyncs, defaults to safe only for
// a cluster hosting nuv's kube: state store, survives in its state (Adopt gives it back) and is
// what `nuv cluster status` reports.
func TestDurability(t *testing.T) {
	project := t.TempDir()
	kc := filepath.Join(project, "clusters", "demo.kubeconfig")
	tests := []struct {
		name       string
		option     string
		nuvState   string
		want       string
		wantNoSync bool
	}{
		{"default is fast", "", "", Fast, true},
		{"a directory state store keeps it fast", "", "dir:/tmp/x", Fast, true},
		{"a kube: state store elsewhere keeps it fast", "", "kube:nuv-state@/elsewhere/kubeconfig", Fast, true},
		{"a kube: state store in this cluster makes it safe", "", "kube:nuv-state@" + kc, Safe, false},
		{"asked fast while hosting state", Fast, "kube:nuv-state@" + kc, Fast, true},
		{"asked safe", Safe, "", Safe, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Clusters{Project: project, Getenv: func(k string) string {
				if k == "NUV_STATE" {
					return tt.nuvState
				}
				return ""
			}}
			o := CreateOptions{Name: "demo", Durability: tt.option}
			if err := o.validate(); err != nil {
				t.Fatal(err)
			}
			s := &state{Name: "demo", Nodes: 1, Ports: map[string]int{}, Durability: p.durability(o, kc)}
			if s.Durability != tt.want {
				t.Fatalf("durability %q, want %q", s.Durability, tt.want)
			}
			dir := t.TempDir()
			for _, sub := range []string{"pki", "config"} {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := generatePKI(filepath.Join(dir, "pki")); err != nil {
				t.Fatal(err)
			}
			for i, r := range portRoles(s) {
				s.Ports[r] = 20000 + i
			}
			if err := writeConfigs(dir, s); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "config", "etcd.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want := "unsafe-no-fsync: false"
			if tt.wantNoSync {
				want = "unsafe-no-fsync: true"
			}
			if !strings.Contains(string(b), "\n"+want+"\n") {
				t.Errorf("etcd config lacks %q:\n%s", want, b)
			}
			if got := durabilityText(s); !strings.HasPrefix(got, tt.want+" (") {
				t.Errorf("status says %q, want %s", got, tt.want)
			}
			// Adopt's spec keeps it.
			home := t.TempDir()
			sd := StateDir(home, "demo")
			s.Phase = "created"
			if err := os.MkdirAll(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := saveState(sd, s); err != nil {
				t.Fatal(err)
			}
			c, err := Clusters{Home: home}.Adopt(t.Context(), "demo")
			if err != nil {
				t.Fatal(err)
			}
			adopted := ""
			adopted = Key.Get(c).Durability
			if (tt.want == Safe) != (adopted == Safe) {
				t.Errorf("adopted spec durability %q, want %s", adopted, tt.want)
			}
		})
	}
}

func TestDurabilityValidation(t *testing.T) {
	if err := (&CreateOptions{Name: "demo", Durability: "sometimes"}).validate(); err == nil {
		t.Fatal("CreateOptions with durability \"sometimes\" accepted")
	}
}
