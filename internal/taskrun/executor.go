package taskrun

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/go-task/task/v3"
	"github.com/go-task/task/v3/args"
	"github.com/go-task/task/v3/taskfile/ast"
)

// location returns the Taskfile directory and entrypoint for a run: the -d/-t/-g flags win over
// opts; relative paths are taken from the command's directory; with an entrypoint and no
// directory, go-task uses the entrypoint's directory.
func (s *session) location(f *flags) (dir, entrypoint string) {
	base := s.env.Dir
	switch {
	case f.entrypoint != "":
		entrypoint = relIn(base, f.entrypoint)
	case s.opts.Entrypoint != "" && f.dir == "" && !f.global:
		entrypoint = relIn(base, s.opts.Entrypoint)
	}
	switch {
	case f.dir != "" || f.global:
		dir = f.taskDir(base)
	case s.opts.Dir != "":
		dir = absIn(base, s.opts.Dir)
	case entrypoint == "":
		dir = base
	}
	return dir, entrypoint
}

// relIn is absIn, except that a relative path stays relative when base is the process's
// directory: go-task then names the file in its messages as the user typed it.
func relIn(base, p string) string {
	if wd, err := os.Getwd(); err == nil && wd == base && !strings.HasPrefix(p, "~") {
		return p
	}
	return absIn(base, p)
}

// executor builds and sets up a go-task Executor for the flags, with nuv's streams and masking.
func (s *session) executor(f *flags) (*task.Executor, error) {
	dir, entrypoint := s.location(f)
	stdin, stdout, stderr := syncStreams(s.env.In, s.env.Out, s.env.Err)
	e := task.NewExecutor(
		task.WithDir(dir),
		task.WithEntrypoint(entrypoint),
		task.WithForce(f.force),
		task.WithForceAll(f.forceAll),
		task.WithInsecure(f.insecure),
		task.WithDownload(f.download),
		task.WithOffline(f.offline),
		task.WithTrustedHosts(f.trustedHosts),
		task.WithRemoteHeaders(f.remoteHeaders),
		task.WithTimeout(f.timeout),
		task.WithCacheExpiryDuration(f.expiry),
		task.WithRemoteCacheDir(f.remoteCacheDir),
		task.WithCACert(f.cacert),
		task.WithCert(f.cert),
		task.WithCertKey(f.certKey),
		task.WithWatch(f.watch),
		task.WithVerbose(f.verbose),
		task.WithSilent(f.silent),
		task.WithDisableFuzzy(f.disableFuzzy),
		task.WithAssumeYes(f.assumeYes),
		task.WithInteractive(f.interactive),
		task.WithDry(f.dry || f.status),
		task.WithSummary(f.summary),
		task.WithParallel(f.parallel),
		task.WithColor(f.colorOn(s.env.Out)),
		task.WithConcurrency(f.concurrency),
		task.WithInterval(f.interval),
		task.WithOutputStyle(f.output),
		task.WithTaskSorter(sorter(f.sort)),
		task.WithVersionCheck(true),
		task.WithFailfast(f.failfast),
		task.WithTempDirPath(f.tempDir),
		task.WithStdin(stdin),
		task.WithStdout(stdout),
		task.WithStderr(stderr),
	)
	e.UserWorkingDir = s.env.Dir
	s.dir = dir
	if err := e.Setup(); err != nil {
		return nil, err
	}
	s.exec = e
	// Values of secret-looking keys the Taskfile itself sets (env:, dotenv:, vars:) are masked too.
	s.masker.Add(staticVars(e.Taskfile.Env), s.opts.SecretKeys...)
	s.masker.Add(staticVars(e.Taskfile.Vars), s.opts.SecretKeys...)
	// go-task's own messages (command echo, dry run, errors) go through its Logger; commands
	// write to the plain streams.
	e.Logger.Stdout = s.masker.Writer(e.Logger.Stdout)
	e.Logger.Stderr = s.masker.Writer(e.Logger.Stderr)
	return e, nil
}

func staticVars(vars *ast.Vars) []string {
	if vars == nil {
		return nil
	}
	var out []string
	for k, v := range vars.All() {
		if str, ok := v.Value.(string); ok {
			out = append(out, k+"="+str)
		}
	}
	return out
}

// setSpecialVars merges the CLI_* variables go-task's CLI sets, so templates can use them.
func setSpecialVars(e *task.Executor, f *flags, cliArgs []string) error {
	quoted, err := args.ToQuotedString(cliArgs)
	if err != nil {
		return err
	}
	special := ast.NewVars()
	special.Set("CLI_ARGS", ast.Var{Value: quoted})
	special.Set("CLI_ARGS_LIST", ast.Var{Value: cliArgs})
	special.Set("CLI_FORCE", ast.Var{Value: f.force || f.forceAll})
	special.Set("CLI_SILENT", ast.Var{Value: f.silent})
	special.Set("CLI_VERBOSE", ast.Var{Value: f.verbose})
	special.Set("CLI_OFFLINE", ast.Var{Value: f.offline})
	special.Set("CLI_ASSUME_YES", ast.Var{Value: f.assumeYes})
	e.Taskfile.Vars.ReverseMerge(special, nil)
	return nil
}

// sorter is go-task's --sort: default (root tasks first, then alphanumeric), alphanumeric, none.
func sorter(name string) func(items, namespaces []string) []string {
	switch name {
	case "none":
		return func(items, _ []string) []string { return items }
	case "alphanumeric":
		return func(items, _ []string) []string { slices.Sort(items); return items }
	}
	return func(items, namespaces []string) []string {
		if len(namespaces) > 0 {
			slices.Sort(items)
			return items
		}
		slices.SortFunc(items, func(a, b string) int {
			ac, bc := strings.Contains(a, ":"), strings.Contains(b, ":")
			if ac == bc {
				return cmp.Compare(a, b)
			}
			if !ac {
				return -1
			}
			return 1
		})
		return items
	}
}
