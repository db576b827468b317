package runtimewrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"syscall"
)

// rlimitNames are the Linux resource limits' names (the OCI spec's process.rlimits types) by number.
var rlimitNames = []string{
	"RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_CORE", "RLIMIT_RSS",
	"RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_MEMLOCK", "RLIMIT_AS", "RLIMIT_LOCKS",
	"RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_RTPRIO", "RLIMIT_RTTIME",
}

// HostHardLimits returns this process's hard resource limits by name: without CAP_SYS_RESOURCE
// they are the most runc (which the wrapper executes in its place) can give a container.
func HostHardLimits() (map[string]uint64, error) {
	out := make(map[string]uint64, len(rlimitNames))
	for i, n := range rlimitNames {
		var l syscall.Rlimit
		if err := syscall.Getrlimit(i, &l); err != nil {
			return nil, fmt.Errorf("getrlimit %s: %w", n, err)
		}
		out[n] = l.Max
	}
	return out, nil
}

// Clamp lowers the resource limits of an OCI runtime spec (process.rlimits) or an OCI process
// (rlimits at the top) whose hard limit exceeds hard[type] to that limit (and the soft limit to at
// most it): without CAP_SYS_RESOURCE runc cannot raise a hard limit and fails the container with
// "error setting rlimit type N: operation not permitted" (rootful podman asks for nofile 1048576
// and nproc 4194304). It returns the edited document and one note per limit lowered ("RLIMIT_NPROC
// 4194304 -> 32768", sorted); with nothing to lower it returns data unchanged.
func Clamp(data []byte, hard map[string]uint64) ([]byte, []string, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("not an OCI spec: %w", err)
	}
	proc := doc
	if p, ok := doc["process"].(map[string]any); ok {
		proc = p
	}
	list, _ := proc["rlimits"].([]any)
	var notes []string
	for _, item := range list {
		rl, ok := item.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := rl["type"].(string)
		limit, known := hard[typ]
		if !known {
			continue
		}
		h, err := number(rl["hard"])
		if err != nil {
			return nil, nil, fmt.Errorf("rlimit %s: hard: %w", typ, err)
		}
		s, err := number(rl["soft"])
		if err != nil {
			return nil, nil, fmt.Errorf("rlimit %s: soft: %w", typ, err)
		}
		if h <= limit && s <= limit {
			continue
		}
		rl["hard"] = json.Number(strconv.FormatUint(min(h, limit), 10))
		rl["soft"] = json.Number(strconv.FormatUint(min(s, limit), 10))
		notes = append(notes, fmt.Sprintf("%s %d -> %d", typ, h, min(h, limit)))
	}
	if len(notes) == 0 {
		return data, nil, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(notes)
	return out, notes, nil
}

func number(v any) (uint64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	return strconv.ParseUint(n.String(), 10, 64)
}

// RewriteLimits edits the spec file of runc's command line args in place (see SpecFile and
// Clamp) and returns the notes of the limits lowered.
func RewriteLimits(args []string, cwd string, hard map[string]uint64) ([]string, error) {
	f := SpecFile(args, cwd)
	if f == "" || len(hard) == 0 {
		return nil, nil
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f, err)
	}
	out, notes, err := Clamp(data, hard)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if len(notes) == 0 {
		return nil, nil
	}
	return notes, replace(f, out)
}

// replace writes data to f through a temporary file and a rename, keeping f's mode.
func replace(f string, data []byte) error {
	st, err := os.Stat(f)
	if err != nil {
		return err
	}
	tmp := f + ".nuv-runc"
	if err := os.WriteFile(tmp, data, st.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, f); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
