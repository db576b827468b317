package container

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// freezerRoot is where the cgroup v1 freezer hierarchy is mounted.
const freezerRoot = "/sys/fs/cgroup/freezer"

// ThawPID thaws the frozen cgroup v1 freezer groups at and under the freezer group of process
// pid (a container's init). runc freezes a container's cgroup while it changes its devices or
// resources on a cgroup v1 host; a container killed meanwhile leaves the group FROZEN, its
// processes stay in uninterruptible sleep, and the runtime can never kill it ("did not receive an
// exit event"). It returns how many groups it thawed; on a cgroup v2 host, or without the right
// to write them, it does nothing. nuv's kind clusters and its machine containers are removed
// this way.
func ThawPID(pid int) int {
	if pid <= 0 {
		return 0
	}
	base, ok := freezerPath("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if !ok {
		return 0
	}
	return thawTree(filepath.Join(freezerRoot, base))
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
