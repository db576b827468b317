package taskrun

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/go-task/task/v3/experiments"
	"github.com/go-task/task/v3/taskfile"
	"github.com/go-task/task/v3/taskfile/ast"
	"github.com/go-task/task/v3/taskrc"
	taskrcast "github.com/go-task/task/v3/taskrc/ast"
)

// flags are the go-task CLI's flags for one invocation (go-task keeps them in globals; nuv parses
// a new FlagSet every time).
type flags struct {
	version, help, init, list, listAll, listJSON               bool
	status, noStatus, nested, insecure, force, forceAll, watch bool
	verbose, silent, disableFuzzy, assumeYes, interactive      bool
	parallel, dry, summary, exitCode, color, failfast, global  bool
	experiments, download, offline, clearCache                 bool
	completion, sort, dir, entrypoint, tempDir                 string
	remoteCacheDir, cacert, cert, certKey                      string
	output                                                     ast.Output
	concurrency                                                int
	interval, timeout, expiry                                  time.Duration
	trustedHosts                                               []string
	remoteHeaders                                              taskfile.HeadersByHost
	colorSet                                                   bool

	fs   *pflag.FlagSet
	args []string // words before --
	dash []string // words after -- (CLI_ARGS)
}

// usage is the go-task CLI's usage text, as `nuv -task` and `task` print it.
const usage = `Usage: nuv -task [flags...] [task...] [VAR=value...] [-- CLI_ARGS...]
       task [flags...] [task...]     (nuv run under the name "task")

Runs the specified task(s) from the Taskfile with go-task's semantics, embedded in nuv. Falls back
to the "default" task if no task name was given. Commands run in nuv's embedded POSIX shell with
Go core utilities, so nothing else needs to be installed.

Options:
`

// preparseDir returns the Taskfile directory -d/-t select among args (relative to base), the
// directory go-task reads .taskrc.yml and experiments from.
func preparseDir(args []string, base string) string {
	var dir, entrypoint string
	fs := pflag.NewFlagSet("pre", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.StringVarP(&dir, "dir", "d", "", "")
	fs.StringVarP(&entrypoint, "taskfile", "t", "", "")
	fs.Usage = func() {}
	_ = fs.Parse(args)
	if entrypoint != "" && dir == "" {
		dir = filepath.Dir(entrypoint)
	}
	return absIn(base, dir)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func absIn(base, p string) string {
	if p == "" {
		return base
	}
	if strings.HasPrefix(p, "~") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if filepath.IsAbs(p) || base == "" {
		return p
	}
	return filepath.Join(base, p)
}

// loadConfig reads .taskrc.yml files for dir and parses experiments (from the config,
// TASK_X_* variables and dir's .env), as the go-task CLI does before parsing its flags.
func loadConfig(dir string) (*taskrcast.TaskRC, error) {
	config, err := taskrc.GetConfig(dir)
	experiments.ParseWithConfig(dir, config)
	return config, err
}

// parseFlags parses the go-task CLI's flags from args with defaults from TASK_* variables and
// config, as go-task's CLI does.
func parseFlags(args []string, config *taskrcast.TaskRC) (*flags, error) {
	f := &flags{}
	fs := pflag.NewFlagSet("task", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.Usage = func() {}
	f.fs = fs
	rc := func() *taskrcast.TaskRC {
		if config == nil {
			return &taskrcast.TaskRC{}
		}
		return config
	}()

	fs.BoolVar(&f.version, "version", false, "Show Task version.")
	fs.BoolVarP(&f.help, "help", "h", false, "Shows Task usage.")
	fs.BoolVarP(&f.init, "init", "i", false, "Creates a new Taskfile.yml in the current folder.")
	fs.StringVar(&f.completion, "completion", "", "Generates shell completion script.")
	fs.BoolVarP(&f.list, "list", "l", false, "Lists tasks with description of current Taskfile.")
	fs.BoolVarP(&f.listAll, "list-all", "a", false, "Lists tasks with or without a description.")
	fs.BoolVarP(&f.listJSON, "json", "j", false, "Formats task list as JSON.")
	fs.StringVar(&f.sort, "sort", "", "Changes the order of the tasks when listed. [default|alphanumeric|none].")
	fs.BoolVar(&f.status, "status", false, "Exits with non-zero exit code if any of the given tasks is not up-to-date.")
	fs.BoolVar(&f.noStatus, "no-status", false, "Ignore status when listing tasks as JSON")
	fs.BoolVar(&f.nested, "nested", false, "Nest namespaces when listing tasks as JSON")
	fs.BoolVar(&f.insecure, "insecure", conf("REMOTE_INSECURE", rc.Remote.Insecure, false), "Forces Task to download Taskfiles over insecure connections.")
	fs.BoolVarP(&f.watch, "watch", "w", false, "Enables watch of the given task.")
	fs.BoolVarP(&f.verbose, "verbose", "v", conf("VERBOSE", rc.Verbose, false), "Enables verbose mode.")
	fs.BoolVarP(&f.silent, "silent", "s", conf("SILENT", rc.Silent, false), "Disables echoing.")
	fs.BoolVar(&f.disableFuzzy, "disable-fuzzy", conf("DISABLE_FUZZY", rc.DisableFuzzy, false), "Disables fuzzy matching for task names.")
	fs.BoolVarP(&f.assumeYes, "yes", "y", conf[bool]("ASSUME_YES", nil, false), "Assume \"yes\" as answer to all prompts.")
	fs.BoolVar(&f.interactive, "interactive", conf("INTERACTIVE", rc.Interactive, false), "Prompt for missing required variables.")
	fs.BoolVarP(&f.parallel, "parallel", "p", false, "Executes tasks provided on command line in parallel.")
	fs.BoolVarP(&f.dry, "dry", "n", conf[bool]("DRY", nil, false), "Compiles and prints tasks in the order that they would be run, without executing them.")
	fs.BoolVar(&f.summary, "summary", false, "Show summary about a task.")
	fs.BoolVarP(&f.exitCode, "exit-code", "x", false, "Pass-through the exit code of the task command.")
	fs.StringVarP(&f.dir, "dir", "d", "", "Sets the directory in which Task will execute and look for a Taskfile.")
	fs.StringVarP(&f.entrypoint, "taskfile", "t", "", `Choose which Taskfile to run. Defaults to "Taskfile.yml".`)
	fs.StringVar(&f.tempDir, "temp-dir", conf("TEMP_DIR", rc.TempDir, ""), "Sets the directory used to store Task temporary files, such as checksums. Relative paths are relative to the root Taskfile.")
	fs.StringVarP(&f.output.Name, "output", "o", conf[string]("OUTPUT", nil, ""), "Sets output style: [interleaved|group|prefixed].")
	fs.StringVar(&f.output.Group.Begin, "output-group-begin", conf[string]("OUTPUT_GROUP_BEGIN", nil, ""), "Message template to print before a task's grouped output.")
	fs.StringVar(&f.output.Group.End, "output-group-end", conf[string]("OUTPUT_GROUP_END", nil, ""), "Message template to print after a task's grouped output.")
	fs.BoolVar(&f.output.Group.ErrorOnly, "output-group-error-only", conf[bool]("OUTPUT_GROUP_ERROR_ONLY", nil, false), "Swallow output from successful tasks.")
	fs.BoolVarP(&f.color, "color", "c", conf("COLOR", rc.Color, true), "Colored output. Enabled by default. Set flag to false or use NO_COLOR=1 to disable.")
	fs.IntVarP(&f.concurrency, "concurrency", "C", conf("CONCURRENCY", rc.Concurrency, 0), "Limit number of tasks to run concurrently.")
	fs.DurationVarP(&f.interval, "interval", "I", 0, "Interval to watch for changes.")
	fs.BoolVarP(&f.failfast, "failfast", "F", conf("FAILFAST", &rc.Failfast, false), "When running tasks in parallel, stop all tasks if one fails.")
	fs.BoolVarP(&f.global, "global", "g", false, "Runs global Taskfile, from $HOME/{T,t}askfile.{yml,yaml}.")
	fs.BoolVar(&f.experiments, "experiments", false, "Lists all the available experiments and whether or not they are enabled.")
	fs.BoolVar(&f.download, "download", false, "Forces task to download remote Taskfiles and ignore any cached versions.")
	fs.BoolVar(&f.offline, "offline", conf("REMOTE_OFFLINE", rc.Remote.Offline, false), "Forces Task to only use local or cached Taskfiles.")
	fs.StringSliceVar(&f.trustedHosts, "trusted-hosts", conf("REMOTE_TRUSTED_HOSTS", &rc.Remote.TrustedHosts, nil), "List of trusted hosts for remote Taskfiles (comma-separated).")
	fs.DurationVar(&f.timeout, "timeout", conf("REMOTE_TIMEOUT", rc.Remote.Timeout, 10*time.Second), "Timeout for downloading remote Taskfiles.")
	fs.BoolVar(&f.clearCache, "clear-cache", false, "Clear the remote cache.")
	fs.DurationVar(&f.expiry, "expiry", conf("REMOTE_CACHE_EXPIRY", rc.Remote.CacheExpiry, 0), "Expiry duration for cached remote Taskfiles.")
	fs.StringVar(&f.remoteCacheDir, "remote-cache-dir", conf("REMOTE_CACHE_DIR", rc.Remote.CacheDir, os.Getenv("TASK_REMOTE_DIR")), "Directory to cache remote Taskfiles.")
	fs.StringVar(&f.cacert, "cacert", conf("REMOTE_CACERT", rc.Remote.CACert, ""), "Path to a custom CA certificate for HTTPS connections.")
	fs.StringVar(&f.cert, "cert", conf("REMOTE_CERT", rc.Remote.Cert, ""), "Path to a client certificate for HTTPS connections.")
	fs.StringVar(&f.certKey, "cert-key", conf("REMOTE_CERT_KEY", rc.Remote.CertKey, ""), "Path to a client certificate key for HTTPS connections.")
	if len(rc.Remote.Headers) > 0 {
		f.remoteHeaders = make(taskfile.HeadersByHost, len(rc.Remote.Headers))
		for _, h := range rc.Remote.Headers {
			f.remoteHeaders[h.Host] = h.Headers
		}
	}
	// The gentle-force experiment splits --force (the called task) from --force-all.
	if experiments.GentleForce.Enabled() {
		fs.BoolVarP(&f.force, "force", "f", false, "Forces execution of the directly called task.")
		fs.BoolVar(&f.forceAll, "force-all", false, "Forces execution of the called task and all its dependant tasks.")
	} else {
		fs.BoolVarP(&f.forceAll, "force", "f", false, "Forces execution even when the task is up-to-date.")
	}

	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	if at := fs.ArgsLenAtDash(); at >= 0 {
		f.args, f.dash = rest[:at], rest[at:]
	} else {
		f.args = rest
	}
	f.colorSet = fs.Changed("color") || os.Getenv("TASK_COLOR") != "" || rc.Color != nil
	return f, nil
}

// validate mirrors the go-task CLI's checks of flag combinations.
func (f *flags) validate() error {
	switch {
	case f.download && f.offline:
		return errors.New("task: You can't set both --download and --offline flags")
	case f.download && f.clearCache:
		return errors.New("task: You can't set both --download and --clear-cache flags")
	case f.global && f.dir != "":
		return errors.New("task: You can't set both --global and --dir")
	case f.output.Name != "group" && f.output.Group.Begin != "":
		return errors.New("task: You can't set --output-group-begin without --output=group")
	case f.output.Name != "group" && f.output.Group.End != "":
		return errors.New("task: You can't set --output-group-end without --output=group")
	case f.output.Name != "group" && f.output.Group.ErrorOnly:
		return errors.New("task: You can't set --output-group-error-only without --output=group")
	case f.list && f.listAll:
		return errors.New("task: cannot use --list and --list-all at the same time")
	case f.listJSON && !f.list && !f.listAll:
		return errors.New("task: --json only applies to --list or --list-all")
	case f.noStatus && !f.listJSON:
		return errors.New("task: --no-status only applies to --json with --list or --list-all")
	case f.nested && !f.listJSON:
		return errors.New("task: --nested only applies to --json with --list or --list-all")
	case (f.cert != "") != (f.certKey != ""):
		return errors.New("task: --cert and --cert-key must be provided together")
	}
	return nil
}

// conf is a flag default: TASK_<key> if set and valid, else the config field, else fallback.
func conf[T any](key string, field *T, fallback T) T {
	if v, ok := envAs[T]("TASK_" + key); ok {
		return v
	}
	if field != nil {
		return *field
	}
	return fallback
}

func envAs[T any](name string) (T, bool) {
	var zero T
	s := os.Getenv(name)
	if s == "" {
		return zero, false
	}
	var v any
	var err error
	switch any(zero).(type) {
	case bool:
		v, err = strconv.ParseBool(s)
	case int:
		v, err = strconv.Atoi(s)
	case time.Duration:
		v, err = time.ParseDuration(s)
	case string:
		v = s
	case []string:
		var l []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				l = append(l, p)
			}
		}
		if len(l) == 0 {
			return zero, false
		}
		v = l
	default:
		return zero, false
	}
	if err != nil {
		return zero, false
	}
	return v.(T), true
}

// colorOn decides colored output as the go-task CLI does: an explicit flag, TASK_COLOR or config
// wins; else NO_COLOR turns it off, FORCE_COLOR or CI=true on; else colors only on a terminal.
func (f *flags) colorOn(out any) bool {
	if f.colorSet {
		return f.color
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); os.Getenv("FORCE_COLOR") != "" || ci {
		return true
	}
	file, ok := out.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// taskDir is the directory the flags select (-g: home; -d; else base).
func (f *flags) taskDir(base string) string {
	if f.global {
		if home, err := os.UserHomeDir(); err == nil {
			return home
		}
	}
	return absIn(base, cmp.Or(f.dir, ""))
}
