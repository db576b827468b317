package kind

import (
	"bytes"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

// TestKindLoggerPodmanNotice: the kind library's "experimental podman provider" warning, which it
// repeats each time its podman provider is set up (every list, status and kubeconfig read when
// podman is the runtime found), is not passed on; other warnings are, prefixed "kind:".
func TestKindLoggerPodmanNotice(t *testing.T) {
	tests := []struct {
		name, msg, want string
	}{
		{"podman notice dropped", podmanNotice, ""},
		{"other warnings kept", "some other warning", "warning: kind: some other warning\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			kindLogger{l: cli.NewLogger(&buf, 0)}.Warn(tt.msg)
			if buf.String() != tt.want {
				t.Fatalf("logged %q, want %q", buf.String(), tt.want)
			}
		})
	}
}
