package clustercmd

import (
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func TestNodeImageBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no verb", []string{"node-image"}, 2, "want `build`"},
		{"unknown verb", []string{"node-image", "make"}, 2, "want `build`"},
		{"stray argument", []string{"node-image", "build", "now"}, 2, `unexpected argument "now"`},
		{"bad flag", []string{"node-image", "build", "--nope"}, 2, "nope"},
		{"other version", []string{"node-image", "build", "--version", "1.35.0"}, 1, "node images of Kubernetes 1.36.3 only (the version of its k8s.io/kubernetes); 1.35.0 is not supported"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, out, _ := testEnv(t, map[string]string{"NUV_CACHE_DIR": t.TempDir()})
			err := Run(context.Background(), env, tt.args)
			if got := cli.ExitCode(err); got != tt.code || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d (want %d), error %v, want it to contain %q", got, tt.code, err, tt.want)
			}
			if out.Len() != 0 {
				t.Fatalf("stdout on failure: %q", out)
			}
		})
	}
}
