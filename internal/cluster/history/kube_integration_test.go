package history_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// TestIntegrationKubeHistory: the history of a Kubernetes state store lives in a ConfigMap of the
// store's namespace on a real API server; concurrent adds (two machines) all land through the
// resourceVersion check, and ForState finds it from the state store.
func TestIntegrationKubeHistory(t *testing.T) {
	c := localtest.Start(t, localtest.Options{})
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-state"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := state.NewKube(c.Kubeconfig, "team-state")
	if err != nil {
		t.Fatal(err)
	}
	hs, err := history.ForState(st)
	if err != nil || hs == nil {
		t.Fatalf("history of a kube store: %v %v", hs, err)
	}
	if got, err := hs.Load(ctx, "eks"); err != nil || len(got) != 0 {
		t.Fatalf("empty history: %v %v", got, err)
	}
	// Two "machines": separate clients adding at once.
	other, err := history.NewKube(c.Kubeconfig, "team-state")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, s := range []history.Store{hs, other, hs, other, hs, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Add(ctx, "eks", history.Sample{Kind: "cluster", Action: "create", Seconds: float64(600 + i), At: time.Now().UTC()}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := other.Load(ctx, "eks")
	if err != nil || len(got) != 6 {
		t.Fatalf("loaded %d samples (%v), want all 6", len(got), err)
	}
	cm, err := cs.CoreV1().ConfigMaps("team-state").Get(ctx, "nuv-history-eks", metav1.GetOptions{})
	if err != nil || cm.Labels["app.kubernetes.io/managed-by"] != "nuv" {
		t.Fatalf("the ConfigMap: %v %+v", err, cm)
	}
	if e := history.For(got, "cluster", "create"); e.Samples != 6 || e.Median < 10*time.Minute {
		t.Fatalf("estimate %+v", e)
	}
}
