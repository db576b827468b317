package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// ErrNotConfirmed is what a destructive verb returns when the user did not consent: the answer
// was not "yes", or there was nobody to ask (no terminal) and no --yes.
var ErrNotConfirmed = errors.New("not confirmed")

// YesOption is the consent flag of destructive verbs: --yes, with terraform's spelling
// --auto-approve as an alias.
type YesOption struct {
	Yes bool
}

// AddFlags defines --yes (-y) and --auto-approve; what says what they approve.
func (o *YesOption) AddFlags(fs *pflag.FlagSet, what string) {
	fs.BoolVarP(&o.Yes, "yes", "y", false, "do not ask before "+what)
	fs.BoolVar(&o.Yes, "auto-approve", false, "same as --yes")
}

// IsTerminal reports whether r is a terminal a person can answer a question on.
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Confirm asks for consent before a destructive action, the way terraform and kind users know:
// with yes (--yes/--auto-approve) it returns nil at once; on a terminal it writes question and
// waits for an answer on stdin, and only "yes" consents; without a terminal it refuses, saying how
// to consent. action names what would be done ("delete 3 clusters"). The error of a refusal wraps
// ErrNotConfirmed and says that nothing was changed. Ctrl-C while waiting returns ctx's error.
func Confirm(ctx context.Context, env *Env, action, question string, yes bool) error {
	if yes {
		return nil
	}
	if !IsTerminal(env.In) {
		return notConfirmed(fmt.Sprintf("refusing to %s without confirmation: standard input is not a terminal, so nobody can be asked; pass --yes (or --auto-approve) to confirm; nothing was changed", action))
	}
	fmt.Fprintf(env.Out, "\n%s\n  Only 'yes' confirms; any other answer cancels.\n\n  Enter a value: ", question)
	answer := make(chan string, 1)
	go func() { answer <- readLine(env.In) }()
	var a string
	select {
	case <-ctx.Done():
		fmt.Fprintln(env.Out)
		return ctx.Err()
	case a = <-answer:
	}
	fmt.Fprintln(env.Out)
	if strings.TrimSpace(a) != "yes" {
		return notConfirmed(fmt.Sprintf("%s cancelled (answer %q, not \"yes\"); nothing was changed", action, strings.TrimSpace(a)))
	}
	return nil
}

// notConfirmed is a refusal: its message alone, matching ErrNotConfirmed.
type notConfirmed string

func (e notConfirmed) Error() string        { return string(e) }
func (e notConfirmed) Is(target error) bool { return target == ErrNotConfirmed }

// readLine reads up to a newline one byte at a time, so nothing after the answer is consumed.
func readLine(r io.Reader) string {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "\r")
}
