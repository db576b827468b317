// Package runtimewrap is the OCI runtime wrapper nuv's test dockerd runs containers through on hosts
// whose capability bounding set lacks capabilities that privileged containers ask for (the VMs nuv
// is tested on lack CAP_SYS_RESOURCE, so runc fails with "unable to apply caps: operation not
// permitted" for every privileged container, kind's nodes included). Before handing the command to
// runc it removes those capabilities from the container's spec: the bundle's config.json on
// `create` and `run`, the process file on `exec --process FILE`. Without CAP_SYS_RESOURCE it also
// lowers resource limits above its own hard limits to them (runc cannot raise them, and rootful
// podman asks every container for nofile 1048576 and nproc 4194304). Everything else passes through.
package runtimewrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// capNames are the Linux capability numbers' names (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// Missing returns the names of the capabilities the kernel knows (0..lastCap) that are absent from
// the bounding set bnd (the hexadecimal CapBnd of /proc/self/status).
func Missing(bnd string, lastCap int) ([]string, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(bnd), 16, 64)
	if err != nil {
		return nil, fmt.Errorf("capability bounding set %q: %w", bnd, err)
	}
	var out []string
	for i := 0; i <= lastCap && i < len(capNames) && i < 64; i++ {
		if v&(1<<uint(i)) == 0 {
			out = append(out, capNames[i])
		}
	}
	return out, nil
}

// HostMissing reads this process's bounding set and the kernel's last capability and returns the
// capabilities it lacks.
func HostMissing() ([]string, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	bnd := ""
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			bnd = strings.TrimSpace(v)
		}
	}
	if bnd == "" {
		return nil, fmt.Errorf("/proc/self/status has no CapBnd line")
	}
	last := len(capNames) - 1
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	return Missing(bnd, last)
}

// SpecFile returns the file of runc's command line args that holds the capabilities to edit: the
// bundle's config.json for create and run (--bundle/-b, default the working directory cwd), the
// --process/-p file for exec, "" for every other command or an exec without a process file.
func SpecFile(args []string, cwd string) string {
	cmd, rest := "", []string(nil)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			// runc's global flags that take a separate value
			switch a {
			case "--root", "--log", "--log-format", "--criu", "--rootless":
				i++
			}
			continue
		}
		cmd, rest = a, args[i+1:]
		break
	}
	switch cmd {
	case "create", "run":
		bundle := cwd
		if v, ok := flagValue(rest, "--bundle", "-b"); ok {
			bundle = v
		}
		if !filepath.IsAbs(bundle) {
			bundle = filepath.Join(cwd, bundle)
		}
		return filepath.Join(bundle, "config.json")
	case "exec":
		if v, ok := flagValue(rest, "--process", "-p"); ok {
			if !filepath.IsAbs(v) {
				v = filepath.Join(cwd, v)
			}
			return v
		}
	}
	return ""
}

func flagValue(args []string, long, short string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, n := range []string{long, short} {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// capSets are the capability lists of an OCI process.
var capSets = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// Drop removes the capabilities drop from an OCI runtime spec (process.capabilities) or an OCI
// process (capabilities at the top, as `runc exec --process` reads it). It returns the edited
// document and the capabilities it removed (sorted, each once); with nothing to remove it returns
// data unchanged.
func Drop(data []byte, drop []string) ([]byte, []string, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // uids, rlimits and the like stay exact
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("not an OCI spec: %w", err)
	}
	caps := doc
	if p, ok := doc["process"].(map[string]any); ok {
		caps = p
	}
	set, _ := caps["capabilities"].(map[string]any)
	if set == nil {
		return data, nil, nil
	}
	bad := map[string]bool{}
	for _, d := range drop {
		bad[d] = true
	}
	removed := map[string]bool{}
	for _, name := range capSets {
		list, ok := set[name].([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			if s, _ := c.(string); bad[s] {
				removed[s] = true
				continue
			}
			kept = append(kept, c)
		}
		set[name] = kept
	}
	if len(removed) == 0 {
		return data, nil, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(removed))
	for n := range removed {
		names = append(names, n)
	}
	sort.Strings(names)
	return out, names, nil
}

// Rewrite edits the spec file of runc's command line args in place (see SpecFile and Drop) and
// returns the capabilities removed.
func Rewrite(args []string, cwd string, drop []string) ([]string, error) {
	f := SpecFile(args, cwd)
	if f == "" || len(drop) == 0 {
		return nil, nil
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f, err)
	}
	out, removed, err := Drop(data, drop)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	if err := replace(f, out); err != nil {
		return nil, err
	}
	return removed, nil
}
