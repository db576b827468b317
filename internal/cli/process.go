package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// EnvFront names the slim nuv binary that started the full program (internal/front sets it when
// it hands a command over): the full program takes it as Env.Exe, so tasks, kubeconfig exec
// credentials and child processes call the `nuv` the user runs, never a cached build's path.
const EnvFront = "NUV_FRONT"

// NewEnv is the environment of a nuv process: its streams, a logger at NUV_VERBOSE, its own
// binary (resolved through symlinks; NUV_FRONT when the slim front handed the command over, an
// executable file, taken out of the environment so it reaches no child), os.Getenv and the
// working directory.
func NewEnv(streams Streams) (*Env, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate the nuv binary: %w", err)
	}
	if front := os.Getenv(EnvFront); front != "" {
		os.Unsetenv(EnvFront)
		if st, err := os.Stat(front); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			exe = front
		}
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	verbosity, _ := strconv.Atoi(os.Getenv("NUV_VERBOSE"))
	return &Env{
		Streams: streams,
		Log:     NewLogger(streams.Err, verbosity),
		Exe:     exe,
		Getenv:  os.Getenv,
		Dir:     dir,
	}, nil
}

// ErrorLine is how nuv prints a failure: a built-in command's errors already read
// "nuv GROUP VERB: ..." (Prefix); anything else is prefixed with "nuv:".
func ErrorLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "nuv ") || strings.HasPrefix(msg, "nuv:") {
		return msg
	}
	return "nuv: " + msg
}

// Report prints err on streams.Err as ErrorLine does (nothing for nil, or for an ExitError that
// carries only a code) and returns the process's exit code.
func Report(streams Streams, err error) int {
	if err != nil {
		var ee *ExitError
		if !(errors.As(err, &ee) && ee.Err == nil) {
			fmt.Fprintln(streams.Err, ErrorLine(err))
		}
	}
	return ExitCode(err)
}
