package container_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/nuv-dev/nuv/internal/machine/container"
)

// TestIntegrationEnsureNetworkConcurrent asks for one subnet's network many times at once, as
// the AWS emulator does when several instances launch into a new subnet together: through one
// Manager (its calls are serialised) and through several (as separate processes would, where
// Docker answers the losers of the race with "pool overlaps" before the winner's network shows by
// name). Every call must succeed and one network be left.
func TestIntegrationEnsureNetworkConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: makes networks on the Docker daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rt := testRuntime(ctx, t)
	for _, tc := range []struct {
		name     string
		managers int
		calls    int
	}{
		{"one manager", 1, 12},
		{"one manager each", 12, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, 3)
			if _, err := rand.Read(b); err != nil {
				t.Fatal(err)
			}
			network := fmt.Sprintf("nuv-nettest-%x", b)
			subnet := fmt.Sprintf("10.%d.%d.0/24", 10+int(b[0])%200, b[1])
			labels := map[string]string{"dev.nuv.test-run": fmt.Sprintf("%x", b)}
			var ms []*Manager
			for range tc.managers {
				m, err := New(rt, nil)
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, m)
			}
			t.Cleanup(func() {
				if err := ms[0].RemoveNetwork(context.Background(), network); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			errs := make([]error, tc.calls)
			var wg sync.WaitGroup
			for i := range tc.calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = ms[i%len(ms)].EnsureNetwork(ctx, network, subnet, labels)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
			nets, err := ms[0].Networks(ctx, labels)
			if err != nil {
				t.Fatal(err)
			}
			if len(nets) != 1 || nets[0].Name != network {
				t.Fatalf("networks with the run's label: %+v, want %s alone", nets, network)
			}
		})
	}
}
