package kind

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ThawNodes thaws the frozen cgroup v1 freezer groups under the node containers of cluster name.
// runc freezes a container's cgroup while it changes its devices or resources on a cgroup v1 host;
// a node killed meanwhile leaves the group FROZEN, its processes stay in uninterruptible sleep, and
// the runtime can never kill the node ("did not receive an exit event"). It returns how many groups
// it thawed; on a cgroup v2 host, or without the right to write them, it does nothing.
func (p *Provider) ThawNodes(ctx context.Context, rt Runtime, name string) int {
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range cs {
		out, err := rt.output(ctx, "inspect", "--format", "{{.State.Pid}}", c.Name)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil || pid <= 0 {
			continue
		}
		base, ok := freezerPath("/proc/" + strconv.Itoa(pid) + "/cgroup")
		if !ok {
			continue
		}
		n += thawTree(filepath.Join("/sys/fs/cgroup/freezer", base))
	}
	return n
}

// freezerPath returns the freezer hierarchy's path in a /proc/PID/cgroup file (cgroup v1 only).
func freezerPath(cgroupFile string) (string, bool) {
	f, err := os.Open(cgroupFile)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && parts[1] == "freezer" {
			return parts[2], true
		}
	}
	return "", false
}

// thawTree writes THAWED to every freezer.state under root that says FROZEN.
func thawTree(root string) int {
	n := 0
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "freezer.state" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(b)) != "FROZEN" {
			return nil
		}
		if os.WriteFile(path, []byte("THAWED"), 0) == nil {
			n++
		}
		return nil
	})
	return n
}
