package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
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
// Short a one-line summary, Long what follows the flags (may be "").
type Usage struct {
	Line, Short, Long string
}

// Print writes the help: summary, usage line, flags, long text.
func (u Usage) Print(w io.Writer, fs *pflag.FlagSet) {
	if u.Short != "" {
		fmt.Fprintf(w, "%s\n\n", u.Short)
	}
	fmt.Fprintf(w, "Usage: %s\n", u.Line)
	if fs != nil && fs.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	}
	if u.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(u.Long, "\n"))
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
// error naming the command and quoting its usage line (exit 2).
func Parse(env *Env, fs *pflag.FlagSet, u Usage, args []string) (done bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			u.Print(env.Out, fs)
			return true, nil
		}
		return false, u.Errorf("%s: %v", fs.Name(), err)
	}
	return false, nil
}

// NoArgs is a usage error when a command that takes no arguments got some.
func NoArgs(fs *pflag.FlagSet, u Usage) error {
	if fs.NArg() > 0 {
		return u.Errorf("%s: unexpected arguments: %s", fs.Name(), strings.Join(fs.Args(), " "))
	}
	return nil
}

// Group is a command with subcommands (`nuv registry up|down|status`).
type Group struct {
	// Name is the command line up to the subcommand ("nuv registry").
	Name string
	// Usage is the group's help text (usage line, subcommands, environment).
	Usage string
	// Subs runs each subcommand with the words after it.
	Subs map[string]func(ctx context.Context, env *Env, args []string) error
	// Default is the subcommand run when none is given; "" makes that a usage error that prints
	// the usage (exit 2). A group never exits silently.
	Default string
}

// Run dispatches args: no words runs Default (or prints the usage to stderr, exit 2); -h, --help
// and help print the usage to stdout (exit 0); an unknown subcommand (or a flag where the
// subcommand belongs) is a usage error listing the known ones and quoting the usage line.
func (g Group) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		if g.Default != "" {
			return g.Subs[g.Default](ctx, env, nil)
		}
		fmt.Fprint(env.Err, g.Usage)
		return Usagef("%s: missing subcommand (%s)", g.Name, g.names())
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.Out, g.Usage)
		return nil
	}
	if run, ok := g.Subs[args[0]]; ok {
		return run(ctx, env, args[1:])
	}
	return Usagef("%s: unknown subcommand %q (%s; `%s --help`)\n%s", g.Name, args[0], g.names(), g.Name, g.usageLine())
}

// usageLine is the first line of the group's usage text.
func (g Group) usageLine() string {
	line, _, _ := strings.Cut(strings.TrimSpace(g.Usage), "\n")
	return line
}

func (g Group) names() string {
	var n []string
	for k := range g.Subs {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
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
