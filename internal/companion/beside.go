package companion

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/version"
)

// EnvProbe is set for a program beside nuv that is asked its version: a nuv program asked so
// answers `-version` and nothing else (it never hands over or builds).
const EnvProbe = "NUV_VERSION_PROBE"

// Sibling returns the program named name (such as nuv-task or nuv-emulator) in the directory of
// nuv's full program full (nuv's programs lie side by side: in a release archive, in the cache's
// build of the full program, beside $NUV_FULL), or "" when there is none. The program found must
// be a build of the same nuv as the full program: one of another version is an error naming both
// (install says what to do then). A check that passed is remembered (CheckedRecord), so a warm
// look-up costs a stat per program.
func Sibling(full, name, cache, install string) (string, error) {
	of := full
	p := filepath.Join(filepath.Dir(of), name)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil || !IsExecutable(p) {
		return "", fmt.Errorf("%s beside %s is not an executable file", p, of)
	}
	record := CheckedRecord(cache, "", of, p)
	if IsFile(record) {
		return p, nil // checked before, and neither program changed since
	}
	ost, err := os.Stat(of)
	if err != nil {
		return "", err
	}
	ofBuild, err := Identify(of, ost, cache)
	if err != nil {
		return "", fmt.Errorf("nuv's full program %s: %w", of, err)
	}
	theirs, err := Identify(p, st, cache)
	if err != nil {
		return "", fmt.Errorf("%s beside %s: %w", p, of, err)
	}
	if !ofBuild.Same(theirs) {
		return "", fmt.Errorf("%s is %s %s, but the full program beside it (%s) is %s: the programs of one release go together; %s (or remove %s)",
			p, name, theirs, of, ofBuild, install, p)
	}
	KeepRecord(record)
	return p, nil
}

// CheckedRecord is the file whose presence says that the programs at paths were found to be one
// build of nuv: keyed by note (what else the check compared with, such as this nuv's version)
// and each program's path, size, modification time, inode and device, so a replaced or rebuilt
// program is checked again. Reading a program's build information costs milliseconds (a few
// megabytes of a large binary are read); a warm `task` costs a stat per program instead. "" when
// a program cannot be stat'ed.
func CheckedRecord(cache, note string, paths ...string) string {
	key := []byte(note + "\n")
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return ""
		}
		key = fmt.Appendf(key, "%s\n%s\n", p, fileKey(st))
	}
	sum := sha256.Sum256(key)
	return filepath.Join(cache, "nuv-full", "checked", hex.EncodeToString(sum[:])[:16])
}

// fileKey is what tells one file from its replacement: size, modification time, inode, device.
func fileKey(st fs.FileInfo) string {
	var ino, dev uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino, dev = sys.Ino, uint64(sys.Dev)
	}
	return fmt.Sprintf("%d\n%d\n%d\n%d", st.Size(), st.ModTime().UnixNano(), ino, dev)
}

// KeepRecord writes the (empty) record of a successful check, best effort: a cache that cannot be
// written only costs the check again next time. Records unused for 30 days are removed.
func KeepRecord(record string) {
	if record == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(record), 0o755); err == nil && fsutil.WriteFileAtomic(record, nil, 0o644) == nil {
		PruneRecords(filepath.Dir(record))
	}
}

// PruneRecords removes the files of dir unused for 30 days (records of programs that are gone:
// every `go run ./nuv` is a new binary).
func PruneRecords(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 30*24*time.Hour {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// IsFile reports whether p names an existing file ("" never does).
func IsFile(p string) bool {
	if p == "" {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Identify returns the Build of the nuv program p (st its file information): from its Go build
// information (read, not run: about 60 µs), or, when that names no version (a -trimpath build,
// whose -ldflags the go command does not record, made where the go command found no git
// repository, such as a git worktree), from its own answer to -version (askVersion).
func Identify(p string, st fs.FileInfo, cache string) (version.Build, error) {
	b, err := version.Of(p)
	if err != nil {
		return b, err
	}
	if b.Version == "" && b.Revision == "" {
		answer, err := askVersion(p, st, cache)
		if err != nil {
			return b, err
		}
		f := strings.Fields(answer)
		b.Version = f[0]
		if len(f) == 3 && f[1] == "commit" {
			b.Commit = f[2]
		}
	}
	return b, nil
}

// askVersion runs `p -version` (as nuv, with EnvProbe set: about a tenth of a second), or reads
// its earlier answer from the cache (keyed by the program's path, size, modification time and
// inode), and returns the answer's one line.
func askVersion(p string, st fs.FileInfo, cache string) (string, error) {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%s\n", p, fileKey(st)))
	record := filepath.Join(cache, "nuv-full", "beside", hex.EncodeToString(sum[:])[:16])
	if data, err := os.ReadFile(record); err == nil && len(strings.Fields(string(data))) > 0 {
		return strings.TrimSpace(string(data)), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "-version")
	cmd.Args[0] = "nuv"
	cmd.Env = append(os.Environ(), EnvProbe+"=1")
	out, err := cmd.Output()
	answer := strings.TrimSpace(string(out))
	if err != nil || answer == "" || strings.Contains(answer, "\n") {
		return "", fmt.Errorf("%s beside nuv carries no version in its build information and `%s -version` answered %q (%v): install nuv's programs from one archive", p, p, answer, err)
	}
	if err := os.MkdirAll(filepath.Dir(record), 0o755); err == nil {
		_ = fsutil.WriteFileAtomic(record, []byte(answer+"\n"), 0o644)
	}
	return answer, nil
}
