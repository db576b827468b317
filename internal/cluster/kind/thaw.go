package kind

import (
	"context"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// ThawNodes thaws the frozen cgroup v1 freezer groups under the node containers of cluster name
// (see container.ThawPID: a node killed while runc had its group frozen can never be killed
// otherwise). It returns how many groups it thawed; on a cgroup v2 host, or without the right to
// write them, it does nothing.
func (p *Provider) ThawNodes(ctx context.Context, rt containerrt.Runtime, name string) int {
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range cs {
		out, err := rt.Output(ctx, "inspect", "--format", "{{.State.Pid}}", c.Name)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			continue
		}
		n += container.ThawPID(pid)
	}
	return n
}
