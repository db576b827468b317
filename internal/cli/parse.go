package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Named exit codes: nuv's own, besides the codes a task or test passes through.
const (
	ExitOK          = 0   // success, and help asked for
	ExitFailure     = 1   // the command failed
	ExitUsage       = 2   // bad command line: the message and the usage line are printed
	ExitInterrupted = 130 // interrupted (Ctrl-C), as a shell reports SIGINT
)

// Usage is the help of one command: Line is its usage line ("nuv operator [--dry-run] ..."),
// Short a one-line summary, Long what follows the flags (may be ""), Examples command lines shown
// last (one a line; may be "").
type Usage struct {
	Line, Short, Long, Examples string
}

// Print writes the help in nuv's one layout: summary, usage, flags, long text, examples.
func (u Usage) Print(w io.Writer, fs *pflag.FlagSet) {
	if u.Short != "" {
		fmt.Fprintf(w, "%s\n\n", u.Short)
	}
	fmt.Fprintf(w, "Usage: %s\n", u.Line)
	if fs != nil && fs.HasAvailableFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	}
	if u.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(u.Long, "\n"))
	}
	printExamples(w, u.Examples)
}

// printExamples writes the Examples section: each line indented by two spaces.
func printExamples(w io.Writer, examples string) {
	examples = strings.Trim(examples, "\n")
	if examples == "" {
		return
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, l := range strings.Split(examples, "\n") {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(l))
	}
}

// Errorf is a usage error (exit 2) whose message ends with the usage line.
func (u Usage) Errorf(format string, a ...any) error {
	return Usagef("%s\nUsage: %s", fmt.Sprintf(format, a...), u.Line)
}

// NewFlagSet is the flag set of one command: errors are returned, never printed or exited on, and
// flags are listed in the order they are defined.
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.Usage = func() {}
	return fs
}

// Parse parses args into fs, the one way nuv's commands read their flags. -h/--help prints the
// help to stdout and reports done (the command then returns nil: exit 0). A bad flag is a usage
// error naming the command and the flag, with the closest known flag for a misspelt one and the
// accepted values for a bad value, and quoting the usage line (exit 2). A deprecated flag that was
// used prints one warning line to stderr.
func Parse(env *Env, fs *pflag.FlagSet, u Usage, args []string) (done bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			u.Print(env.Out, fs)
			return true, nil
		}
		return false, u.Errorf("%s: %s", fs.Name(), FlagError(fs, err))
	}
	warnDeprecated(env, fs)
	return false, nil
}

// warnDeprecated prints one warning line for each deprecated flag that was set.
func warnDeprecated(env *Env, fs *pflag.FlagSet) {
	fs.Visit(func(f *pflag.Flag) {
		if f.Deprecated != "" && env != nil && env.Err != nil {
			fmt.Fprintf(env.Err, "warning: --%s is deprecated: %s\n", f.Name, f.Deprecated)
		}
	})
}

// NoArgs is a usage error when a command that takes no arguments got some.
func NoArgs(fs *pflag.FlagSet, u Usage) error {
	if fs.NArg() > 0 {
		return u.Errorf("%s: unexpected arguments: %s", fs.Name(), strings.Join(fs.Args(), " "))
	}
	return nil
}

// TimeoutOption is the --timeout flag commands share: a bound on each wait.
type TimeoutOption struct {
	Timeout time.Duration
}

// AddFlags defines --timeout with its default and what it bounds.
func (o *TimeoutOption) AddFlags(fs *pflag.FlagSet, def time.Duration, what string) {
	fs.DurationVar(&o.Timeout, "timeout", def, what)
}

// Validate refuses a negative timeout, and zero unless zeroOK (zero then means no limit).
func (o TimeoutOption) Validate(u Usage, zeroOK bool) error {
	if o.Timeout < 0 || (o.Timeout == 0 && !zeroOK) {
		return u.Errorf("--timeout %s: must be positive", o.Timeout)
	}
	return nil
}

// ClusterOption is the cluster selection commands share: --kubeconfig F, else the cluster
// kube.Resolve finds (NUV_CLUSTER, the project's selection, KUBECONFIG).
type ClusterOption struct {
	Kubeconfig string
}

// AddFlags defines --kubeconfig.
func (o *ClusterOption) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: NUV_CLUSTER, the project's selection, else KUBECONFIG)")
}
