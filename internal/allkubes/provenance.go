package allkubes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/report"
)

// runProvenance is what identifies this run in a merged report: the report directory, the machine,
// the nuv version, the project's commit and the CI job (from the environment CI systems set).
func (o *Options) runProvenance(dir string) report.Provenance {
	get := envLookup(o.Environ)
	p := report.Provenance{Run: filepath.Base(dir), Nuv: o.Nuv, Machine: get("NUV_MACHINE")}
	if p.Machine == "" {
		p.Machine, _ = os.Hostname()
	}
	if r := get("RUNNER_NAME"); r != "" && get("NUV_MACHINE") == "" {
		p.Machine += " (runner " + r + ")"
	}
	switch {
	case get("GITHUB_RUN_ID") != "":
		p.CIJob = strings.TrimSuffix(get("GITHUB_SERVER_URL"), "/") + "/" + get("GITHUB_REPOSITORY") + "/actions/runs/" + get("GITHUB_RUN_ID")
		if a := get("GITHUB_RUN_ATTEMPT"); a != "" {
			p.CIJob += "/attempts/" + a
		}
	case get("CI_JOB_URL") != "":
		p.CIJob = get("CI_JOB_URL")
	}
	if p.CIJob != "" {
		if j := firstNonEmpty(get("GITHUB_JOB"), get("CI_JOB_NAME")); j != "" {
			p.Run += " (" + j + ")"
		}
	}
	p.Commit = firstNonEmpty(get("GITHUB_SHA"), get("CI_COMMIT_SHA"))
	if p.Commit == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
		cmd.Dir = o.Project
		if out, err := cmd.Output(); err == nil {
			p.Commit = strings.TrimSpace(string(out))
		}
	}
	return p
}

// nuvVersion asks the nuv binary the children run for its version ("unknown" if it cannot say).
func nuvVersion(exe string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-version").Output()
	if err != nil {
		return "unknown"
	}
	return versionWord(string(out))
}

// versionWord is the version in `nuv -version`'s answer, "<version>" or "<version> commit <sha>"
// (a stamped build): its first word ("unknown" for anything else).
func versionWord(out string) string {
	f := strings.Fields(out)
	if len(f) == 0 || strings.Contains(strings.TrimSpace(out), "\n") || (len(f) != 1 && (len(f) != 3 || f[1] != "commit")) {
		return "unknown"
	}
	return f[0]
}

func envLookup(environ []string) func(string) string {
	m := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
