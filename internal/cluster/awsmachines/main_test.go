package awsmachines_test

import (
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awsworld"
	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
)

// asNuv makes this test binary act as nuv (so the failpoint can kill it with SIGKILL), and the
// kubeconfigs' exec credential is this binary too.
const asNuv = "NUV_AWSMACHINES_TEST_AS_NUV"

func TestMain(m *testing.M) { clustertest.ActAsNuv(m, asNuv) }

// world is awstest's world with the tests' helpers.
type world struct{ *awsworld.World }

func newWorld(t *testing.T) *world {
	t.Helper()
	return &world{awsworld.NewWorld(t, asNuv, "")}
}
