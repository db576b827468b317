package taskrun

import (
	"os"
	"strings"
	"sync"

	"github.com/go-task/task/v3"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/secrets"
	"github.com/nuv-dev/nuv/internal/shell"
)

// envMu serialises runs: go-task reads the process environment, which a run changes.
var envMu sync.Mutex

// session is one run's prepared environment.
type session struct {
	env     *cli.Env
	opts    Options
	masker  *secrets.Masker
	linkDir string
	// What explain needs to name the Taskfile, the directory searched and the task: set by
	// executor and by the callers of Run.
	dir   string
	exec  *task.Executor
	calls []*task.Call
}

// withEnv applies opts' environment and the link directory to the process, runs fn and restores
// the environment.
func withEnv(env *cli.Env, opts Options, fn func(*session) error) error {
	envMu.Lock()
	defer envMu.Unlock()

	s := &session{env: env, opts: opts}
	links := opts.Links
	if links == nil {
		links = shell.DefaultLinks
	}
	if env.Exe != "" && len(links) > 0 {
		home, err := paths.Home(env.Getenv)
		if err != nil {
			return err
		}
		if s.linkDir, err = shell.LinkDir(home, env.Exe, links); err != nil {
			return err
		}
	}
	restore := overlayEnv(opts.Env, opts.DefaultEnv, s.linkDir)
	defer restore()
	defer switchCoreUtils()()
	s.masker = secrets.NewMasker(os.Environ(), opts.SecretKeys...)
	return fn(s)
}

// overlayEnv sets env (overriding), defaults (only where unset) and PATH with linkDir first, and
// returns a func restoring the previous process environment.
func overlayEnv(env, defaults []string, linkDir string) (restore func()) {
	type saved struct {
		val string
		ok  bool
	}
	prev := map[string]saved{}
	set := func(k, v string) {
		if _, done := prev[k]; !done {
			old, ok := os.LookupEnv(k)
			prev[k] = saved{old, ok}
		}
		os.Setenv(k, v)
	}
	for _, kv := range defaults {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			if _, exists := os.LookupEnv(k); !exists {
				set(k, v)
			}
		}
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			set(k, v)
		}
	}
	if linkDir != "" {
		set("PATH", shell.PrependPath(linkDir, os.Getenv("PATH")))
	}
	return func() {
		for k, s := range prev {
			if s.ok {
				os.Setenv(k, s.val)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}

// fail maps a go-task error to nuv's exit error: go-task's exit code (the failing command's own
// code with exitCode, as `task -x`), the message made to name the file, line and task (explain)
// and masked.
func (s *session) fail(err error, exitCode bool) error {
	if err == nil {
		return nil
	}
	err = explain(err, s.dir, s.exec, s.calls)
	return cli.Exit(exitCodeOf(err, exitCode), s.masker.Error(err))
}
