package container_test

import (
	"context"
	"os"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// testRuntime is the container runtime kind clusters use (the test daemon's, through DOCKER_HOST);
// the test fails when there is none.
func testRuntime(ctx context.Context, t *testing.T) container.Runtime {
	t.Helper()
	krt, err := containerrt.Detect(ctx, os.Getenv)
	if err != nil {
		t.Fatalf("%v (start the test daemon with `bash hack/dockerd.sh start` and `eval \"$(bash hack/dockerd.sh env)\"`)", err)
	}
	return container.Runtime{Name: krt.Name, Path: krt.Path}
}

// testImage is the node image the tests' machines boot: NUV_KIND_NODE_IMAGE names one, else
// nuv's own (built when missing).
func testImage(ctx context.Context, t *testing.T, rt container.Runtime, log cli.Logger) string {
	t.Helper()
	if image := os.Getenv("NUV_KIND_NODE_IMAGE"); image != "" {
		return image
	}
	image, err := nodeimage.Ensure(ctx, nodeimage.Options{Runtime: rt.Path, Getenv: os.Getenv, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return image
}
