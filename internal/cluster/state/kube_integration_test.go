package state_test

import (
	"context"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestIntegrationKubeConformance runs the state-store suite against the Kubernetes backend on a
// real local cluster: each subtest gets its own namespace, shared by the stores it opens.
func TestIntegrationKubeConformance(t *testing.T) {
	c := localtest.Start(t, localtest.Options{})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	var mu sync.Mutex
	n := 0
	names := map[*testing.T]string{}
	statetest.Run(t, statetest.Backend{
		New: func(t *testing.T) state.Store {
			mu.Lock()
			ns, ok := names[t]
			if !ok {
				n++
				ns = "nuv-state-" + itoa(n)
				names[t] = ns
			}
			mu.Unlock()
			s, err := state.NewKube(c.Kubeconfig, ns)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(context.Background()); err != nil {
				t.Fatal(err)
			}
			return s
		},
		Corrupt: func(t *testing.T, s state.Store, name string) {
			k := s.(*state.Kube)
			_, err := cs.CoreV1().Secrets(k.Namespace).Create(context.Background(), &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "nuv-state-" + name, Labels: map[string]string{"nuv.dev/state-of": name}},
				Type:       state.SecretType,
				Data:       map[string][]byte{"record.json": []byte(`{"name": "` + name + `", "phase": `)},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		},
	})
}

func TestIntegrationKubeUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	c := localtest.Start(t, localtest.Options{})
	if err := c.Provider.Stop(context.Background(), c.Name); err != nil {
		t.Fatal(err)
	}
	s, err := state.NewKube(c.Kubeconfig, "nuv-state")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err == nil {
		t.Fatal("Check of a stopped cluster succeeded")
	}
}

func itoa(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }
