package kind

import (
	"fmt"
	"strings"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// createDetail is what to add to an error of kind's create (err as kind returned it): what the
// runtime's command printed (kind's own message names only the command and its exit status:
// "podman run ... failed with error: exit status 126") and, for a failure this kind of host is
// known to cause, the cause and the way out; "" when kind ran no command that failed.
//
// Without CAP_SYS_RESOURCE in the bounding set (these VMs), runc can neither give a privileged
// container that capability ("unable to apply caps", docker) nor raise its resource limits
// ("error setting rlimit type 7: operation not permitted": rootful podman asks every container for
// nofile 1048576); runtimes that run their containers through nuv's wrapper bin/nuv-runc
// (hack/dockerd.sh, hack/podman.sh) get specs runc can start.
func createDetail(r containerrt.Runtime, err error, h Host) string {
	re := kindexec.RunErrorForError(err)
	if re == nil {
		return ""
	}
	out := lastLines(strings.TrimSpace(string(re.Output)), 6)
	if out == "" {
		return ""
	}
	msg := fmt.Sprintf("\n%s printed:\n%s", r.Name, indent(out, "  "))
	if h.NoSysResource && strings.Contains(out, "operation not permitted") &&
		(strings.Contains(out, "rlimit") || strings.Contains(out, "apply caps")) {
		msg += fmt.Sprintf("\nthis host lacks CAP_SYS_RESOURCE, so runc can neither give kind's privileged node that capability nor raise its resource limits: %s's OCI runtime must drop them first. nuv's runtime wrapper does (bin/nuv-runc: `bash hack/podman.sh setup` and `eval \"$(bash hack/podman.sh env)\"` select a podman configuration that uses it; `bash hack/dockerd.sh start` a docker daemon that does, with which kind clusters work here)", r.Name)
	}
	return msg
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}
