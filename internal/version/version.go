// Package version holds nuv's version and commit, the one place they are stamped at build time:
//
//	go build -ldflags "-X github.com/nuv-dev/nuv/internal/version.Version=1.2.3 -X github.com/nuv-dev/nuv/internal/version.Commit=<sha>" ./nuv
//
// The slim front binary passes its own stamp on when it builds the full program, so both print
// the same version. A release (internal/release) stamps every program of an archive alike; the
// front reads the identity of a program beside it from the program's build information (Of),
// without running it, and refuses one of another version (Build.Same).
package version

import (
	"debug/buildinfo"
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is nuv's version.
var Version = "0.1.0-dev"

// Commit is the git commit nuv was built from ("" for a build that was not stamped).
var Commit = ""

// Var and CommitVar are the linker names of Version and Commit (for -ldflags -X).
const (
	Var       = "github.com/nuv-dev/nuv/internal/version.Version"
	CommitVar = "github.com/nuv-dev/nuv/internal/version.Commit"
)

// Ldflags returns the -X flags that stamp version and commit (commit may be empty).
func Ldflags(version, commit string) string {
	s := "-X " + Var + "=" + version
	if commit != "" {
		s += " -X " + CommitVar + "=" + commit
	}
	return s
}

// String is what `nuv -version` prints: the version, then the commit when one was stamped.
func String(version, commit string) string {
	if commit == "" {
		return version
	}
	return version + " commit " + commit
}

// Build is what identifies one build of a nuv program: the version and commit stamped with
// -ldflags -X, and what the Go toolchain records itself (the main module's version, which is the
// tag or a pseudo-version naming the commit, the commit and whether the tree was modified). The
// go command leaves -ldflags out of a -trimpath build's record (a release's), and a build outside
// git has no commit: each field is "" when unknown.
type Build struct {
	Version, Commit string
	Main            string
	Revision        string
	Modified        bool
}

// FromInfo reads a Build from Go build information.
func FromInfo(info *debug.BuildInfo) Build {
	b := Build{Main: info.Main.Version}
	for _, s := range info.Settings {
		switch s.Key {
		case "-ldflags":
			b.Version, _ = xValue(s.Value, Var)
			b.Commit, _ = xValue(s.Value, CommitVar)
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// Self is the Build of the running program: its build information, and Version and Commit as
// compiled in.
func Self() Build {
	var b Build
	if info, ok := debug.ReadBuildInfo(); ok {
		b = FromInfo(info)
	}
	b.Version, b.Commit = Version, Commit
	return b
}

// Of reads the Build of the Go program at path from its build information: the file is read (a
// few kilobytes of it), not run.
func Of(path string) (Build, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return Build{}, fmt.Errorf("read the build information of %s: %w", path, err)
	}
	return FromInfo(info), nil
}

// Same reports whether b and o are builds of one version of nuv, comparing what both know: the
// stamped version and commit, the commit and modified flag the toolchain recorded, and the main
// module's version.
func (b Build) Same(o Build) bool {
	if b.Version != "" && o.Version != "" && b.Version != o.Version {
		return false
	}
	if b.Commit != "" && o.Commit != "" && b.Commit != o.Commit {
		return false
	}
	if b.Revision != "" && o.Revision != "" && (b.Revision != o.Revision || b.Modified != o.Modified) {
		return false
	}
	if (b.Revision == "") != (o.Revision == "") {
		return false // one was built from a git tree, the other not: not one build
	}
	return b.Main == o.Main
}

// String names the build for messages: its version (the stamped one, else the main module's) and
// its commit.
func (b Build) String() string {
	v := b.Version
	if v == "" {
		v = b.Main
	}
	if v == "" {
		v = "unknown"
	}
	c := b.Commit
	if c == "" {
		c = b.Revision
	}
	if c != "" {
		v += " (commit " + c[:min(12, len(c))]
		if b.Modified {
			v += ", modified"
		}
		v += ")"
	}
	return v
}

// xValue finds "-X name=value" in a -ldflags string as the go command records it (space-separated,
// values without spaces).
func xValue(ldflags, name string) (string, bool) {
	fields := strings.Fields(ldflags)
	for i, f := range fields {
		arg := ""
		switch {
		case f == "-X" && i+1 < len(fields):
			arg = fields[i+1]
		case strings.HasPrefix(f, "-X="):
			arg = strings.TrimPrefix(f, "-X=")
		default:
			continue
		}
		if k, v, ok := strings.Cut(arg, "="); ok && k == name {
			return strings.Trim(v, `'"`), true
		}
	}
	return "", false
}
