package addons

import (
	"os"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
)

// TestMain deletes the local cluster the integration tests share (localtest.Shared) when they are
// done. Add-ons are cluster-wide (their records in nuv-addons, CRDs, their namespaces), so each test
// on the shared cluster deletes what its add-ons made before the next one starts: every test begins
// on a cluster no add-on touched, as if it were its own.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }
