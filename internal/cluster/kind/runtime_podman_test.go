package kind

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// TestCreateDetail: a failed command of kind's create is shown with what the runtime printed, and
// the failure a host without CAP_SYS_RESOURCE causes is explained.
func TestCreateDetail(t *testing.T) {
	runErr := func(out string) error {
		// kind wraps its errors (pkg/errors style, with Cause): the detail digs the command out
		return fmt.Errorf("wrapped: %w", &kindexec.RunError{Command: []string{"podman", "run", "--name", "x-control-plane"}, Output: []byte(out), Inner: errors.New("exit status 126")})
	}
	rlimit := "Error: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: OCI permission denied\n"
	for _, tc := range []struct {
		name string
		err  error
		host Host
		want []string
		not  []string
	}{
		{"rlimit without CAP_SYS_RESOURCE", (&kindexec.RunError{Command: []string{"podman", "run"}, Output: []byte(rlimit), Inner: errors.New("exit status 126")}), Host{NoSysResource: true},
			[]string{"\npodman printed:\n  Error: runc: runc create failed", "error setting rlimit type 7", "this host lacks CAP_SYS_RESOURCE", "bin/nuv-runc", "hack/podman.sh setup", "hack/dockerd.sh start"}, nil},
		{"caps without CAP_SYS_RESOURCE", &kindexec.RunError{Command: []string{"docker", "run"}, Output: []byte("docker: Error response from daemon: unable to apply caps: operation not permitted\n"), Inner: errors.New("exit status 126")}, Host{NoSysResource: true},
			[]string{"\ndocker printed:\n", "unable to apply caps", "this host lacks CAP_SYS_RESOURCE", "docker's OCI runtime"}, nil},
		{"same output, host with the capability", &kindexec.RunError{Command: []string{"podman", "run"}, Output: []byte(rlimit), Inner: errors.New("exit status 126")}, Host{},
			[]string{"error setting rlimit type 7"}, []string{"lacks CAP_SYS_RESOURCE"}},
		{"other failure: the last lines", &kindexec.RunError{Command: []string{"podman", "run"}, Output: []byte("1\n2\n3\n4\n5\n6\n7\n8\nError: no space left on device\n"), Inner: errors.New("exit status 125")}, Host{NoSysResource: true},
			[]string{"\n  4\n", "no space left on device"}, []string{"\n  3\n", "lacks CAP_SYS_RESOURCE"}},
		{"no command failed", errors.New("timed out waiting for the control plane"), Host{NoSysResource: true}, nil, []string{"printed"}},
		{"behind fmt wrapping kind does not use", runErr(rlimit), Host{NoSysResource: true}, nil, []string{"printed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := containerrt.Runtime{Name: "podman"}
			if re := kindexec.RunErrorForError(tc.err); re != nil {
				rt.Name = re.Command[0]
			}
			got := createDetail(rt, tc.err, tc.host)
			if tc.want == nil && got != "" {
				t.Errorf("detail %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("detail %q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("detail %q has %q", got, n)
				}
			}
		})
	}
}
