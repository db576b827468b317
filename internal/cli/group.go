package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Value kinds a verb's arguments and flags take, for shell completion (internal/completion asks
// nuv for the values of each kind). "" is anything (the shell's default completion).
const (
	ValProvider  = "provider"  // a registered cluster provider (local, kind, eks, ...)
	ValCluster   = "cluster"   // a cluster nuv manages (`nuv cluster list`)
	ValInventory = "inventory" // a cluster of the project's clusters/ inventory, by name
	ValStack     = "stack"     // a stack of the add-ons index
	ValAddon     = "addon"     // an add-on of the add-ons index
	ValShell     = "shell"     // bash, zsh or fish
	ValCommand   = "command"   // a built-in command, a tool or a Taskfile task (all-kubes' target)
)

// Verb is one verb of a Group (`up` of `nuv registry up`).
type Verb struct {
	Name    string
	Aliases []string
	// Short is the one-line summary shown in the group's help.
	Short string
	// Hidden verbs run but are neither listed nor completed (internal entry points such as serve).
	Hidden bool
	// Run executes the verb with the words after it; it parses its flags with Parse.
	Run func(ctx context.Context, env *Env, args []string) error
	// Args are the value kinds of the positional arguments, in order; the last one repeats when
	// Variadic (completion only).
	Args     []string
	Variadic bool
	// FlagValues are the value kinds of flags, by long name without dashes (completion only).
	FlagValues map[string]string
	// Sub is set when the verb is itself a group (`nuv cluster state list`).
	Sub *Group
}

// Group is a command with verbs (`nuv registry up|down|status`): the one plumbing every nuv group
// dispatches with, so that all of them behave alike:
//   - no verb, -h, --help or help: the group's help on stdout, exit 0 (`help VERB` is `VERB --help`);
//   - an unknown verb, or a flag where the verb belongs: a usage error on stderr naming it, with
//     the closest verb ("did you mean"), exit 2;
//   - a verb's error is printed as `nuv GROUP VERB: message`.
type Group struct {
	// Name is the command line up to the verb ("nuv registry").
	Name string
	// Short is the one-line summary; Long the text after the verbs (environment, notes);
	// Examples command lines, one a line.
	Short, Long, Examples string
	Verbs                 []Verb
}

// Lookup returns the verb called name (or one of its aliases), or nil.
func (g *Group) Lookup(name string) *Verb {
	for i := range g.Verbs {
		v := &g.Verbs[i]
		if v.Name == name {
			return v
		}
		for _, a := range v.Aliases {
			if a == name {
				return v
			}
		}
	}
	return nil
}

// VerbNames are the names of the verbs that are listed (not hidden), in help order.
func (g *Group) VerbNames() []string {
	var n []string
	for _, v := range g.Verbs {
		if !v.Hidden {
			n = append(n, v.Name)
		}
	}
	return n
}

// Help writes the group's help in nuv's one layout: summary, usage, verbs, long text, examples.
func (g *Group) Help(w io.Writer) {
	if g.Short != "" {
		fmt.Fprintf(w, "%s\n\n", g.Short)
	}
	fmt.Fprintf(w, "Usage: %s <verb> [flags] [args]\n\nVerbs:\n", g.Name)
	width := 0
	for _, v := range g.Verbs {
		if !v.Hidden && len(v.Name) > width {
			width = len(v.Name)
		}
	}
	for _, v := range g.Verbs {
		if !v.Hidden {
			fmt.Fprintf(w, "  %-*s  %s\n", width, v.Name, v.Short)
		}
	}
	if g.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(g.Long, "\n"))
	}
	printExamples(w, g.Examples)
	fmt.Fprintf(w, "\nRun '%s <verb> --help' for a verb's flags.\n", g.Name)
}

// Run dispatches args (see Group for the convention).
func (g *Group) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		g.Help(env.Out)
		return nil
	}
	word := args[0]
	switch word {
	case "-h", "--help":
		g.Help(env.Out)
		return nil
	case "help":
		if len(args) > 1 {
			if v := g.Lookup(args[1]); v != nil {
				return g.run(ctx, env, v, []string{"--help"})
			}
			return g.unknown(args[1])
		}
		g.Help(env.Out)
		return nil
	}
	if v := g.Lookup(word); v != nil {
		return g.run(ctx, env, v, args[1:])
	}
	if strings.HasPrefix(word, "-") {
		return Usagef("%s: unknown flag %s: flags go after the verb\n%s", g.Name, word, g.usageLine())
	}
	return g.unknown(word)
}

func (g *Group) run(ctx context.Context, env *Env, v *Verb, args []string) error {
	if v.Sub != nil {
		return v.Sub.Run(ctx, env, args)
	}
	return Prefix(g.Name+" "+v.Name, v.Run(ctx, env, args))
}

// unknown is the usage error for a word that is not a verb.
func (g *Group) unknown(word string) error {
	var names []string
	for _, v := range g.Verbs {
		if !v.Hidden {
			names = append(names, v.Name)
			names = append(names, v.Aliases...)
		}
	}
	hint := ""
	if s := Suggest(word, names); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	return Usagef("%s: unknown verb %q%s\n%s", g.Name, word, hint, g.usageLine())
}

// usageLine closes a usage error: the usage line and the verbs.
func (g *Group) usageLine() string {
	return fmt.Sprintf("Usage: %s <verb> [flags] [args] (verbs: %s; %s --help)", g.Name, strings.Join(g.VerbNames(), ", "), g.Name)
}

// Prefix gives err nuv's one error prefix, "nuv GROUP VERB: message": a message that already
// names nuv is left as it is; a leading repeat of the command's own words ("registry up: ",
// "up: ") is dropped. Exit codes and wrapped errors are kept; a silent exit stays silent.
func Prefix(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return err
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "nuv ") || strings.HasPrefix(msg, "nuv:") {
		return err
	}
	words := strings.Fields(strings.TrimPrefix(prefix, "nuv "))
	for i := range words {
		if rest, ok := strings.CutPrefix(msg, strings.Join(words[i:], " ")+": "); ok {
			msg = rest
			break
		}
	}
	if rest, ok := strings.CutPrefix(msg, words[0]+": "); ok && len(words) > 1 {
		msg = rest
	}
	return &prefixedError{msg: prefix + ": " + msg, err: err}
}

type prefixedError struct {
	msg string
	err error
}

func (e *prefixedError) Error() string { return e.msg }
func (e *prefixedError) Unwrap() error { return e.err }
