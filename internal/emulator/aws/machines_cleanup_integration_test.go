package aws

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// machineManager is the container manager of the Docker daemon the emulator's machines run on.
func machineManager(t *testing.T) *container.Manager {
	t.Helper()
	rt, err := containerrt.Detect(context.Background(), os.Getenv)
	if err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	return must(container.New(container.Runtime{Name: rt.Name, Path: rt.Path}, nil))
}

// accountObjects lists the machines and the subnet networks of account's emulator on mgr's daemon.
func accountObjects(ctx context.Context, mgr *container.Manager, account string) (machines, networks []string, err error) {
	labels := map[string]string{LabelEmulator: "aws", LabelAccount: account}
	ms, err := mgr.List(ctx, labels)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range ms {
		machines = append(machines, m.Name)
	}
	ns, err := mgr.Networks(ctx, labels)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range ns {
		networks = append(networks, n.Name)
	}
	return machines, networks, nil
}

// removeAccountObjectsAtCleanup removes, when the test ends, every machine and subnet network
// that the emulator of *account (set once the emulator runs) left, each an error of the test:
// whatever happened, the Docker daemon other tests share gets nothing of this one.
func removeAccountObjectsAtCleanup(t *testing.T, mgr *container.Manager, account *string) {
	t.Cleanup(func() {
		if *account == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		machines, networks, err := accountObjects(ctx, mgr, *account)
		if err != nil {
			t.Errorf("list what the emulator left: %v", err)
		}
		for _, m := range machines {
			t.Errorf("machine %s left behind: removing it", m)
			if err := mgr.Remove(ctx, m); err != nil {
				t.Errorf("remove machine %s: %v", m, err)
			}
		}
		for _, n := range networks {
			t.Errorf("network %s left behind: removing it", n)
			if err := mgr.RemoveNetwork(ctx, n); err != nil {
				t.Errorf("remove network %s: %v", n, err)
			}
		}
	})
}

// waitAccountEmpty waits until account's emulator has no machine and no subnet network left (it
// removes a deleted subnet's network in the background, once the subnet's machines are gone).
func waitAccountEmpty(t *testing.T, mgr *container.Manager, account string) {
	t.Helper()
	var machines, networks []string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var err error
		machines, networks, err = accountObjects(context.Background(), mgr, account)
		if err == nil && len(machines) == 0 && len(networks) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left by the emulator after everything was deleted: machines [%s], networks [%s] (%v)",
				strings.Join(machines, " "), strings.Join(networks, " "), err)
		}
	}
}
