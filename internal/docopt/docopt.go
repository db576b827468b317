// Package docopt turns a bundle folder's docopt usage text (nuvopts.txt or docopts.md) and the words
// a user typed into task variables, the way published nuv bundles expect them:
//
//	<name>      -> _name_
//	--dry-run   -> __dry_run
//	-v          -> _v
//	command     -> command
//
// Booleans become "true"/"false", counted options their count, repeated values a []string (a list
// variable for go-task) and absent values "". Parsing is done by github.com/docopt/docopt-go; this
// package never prints and never exits: a parse error is returned as *UsageError carrying the usage.
package docopt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	docopt "github.com/docopt/docopt-go"
)

// UsageError reports words that do not match the usage; Usage is the usage section to show.
type UsageError struct {
	Msg   string
	Usage string
}

func (e *UsageError) Error() string {
	if e.Msg == "" {
		return "arguments do not match the usage"
	}
	return e.Msg
}

// ErrHelp is returned when the words ask for help (-h or --help) and the usage does not define them.
var ErrHelp = errors.New("help requested")

// Parse matches args against the usage found in doc and returns the task variables.
// A malformed usage text is an error naming the problem; args that do not fit are a *UsageError.
func Parse(doc string, args []string) (vars map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil { // docopt-go panics on some malformed usages
			vars, err = nil, fmt.Errorf("invalid docopt usage: %v", r)
		}
	}()
	if args == nil {
		args = []string{} // docopt-go reads os.Args for a nil slice
	}
	if !definesHelp(doc) && wantsHelp(args) {
		return nil, ErrHelp
	}
	var handled bool
	p := &docopt.Parser{HelpHandler: func(error, string) { handled = true }}
	opts, err := p.ParseArgs(doc, args, "")
	if err != nil {
		var ue *docopt.UserError
		if errors.As(err, &ue) {
			msg := strings.TrimSpace(ue.Error())
			if msg == "" {
				msg = explain(doc, args)
			}
			return nil, &UsageError{Msg: msg, Usage: UsageSection(doc)}
		}
		return nil, fmt.Errorf("invalid docopt usage: %w", err)
	}
	if opts == nil && handled {
		return nil, ErrHelp
	}
	return Vars(opts), nil
}

// Vars converts a docopt result to task variables (names and values as documented on the package).
func Vars(opts map[string]any) map[string]any {
	out := make(map[string]any, len(opts))
	for k, v := range opts {
		out[VarName(k)] = value(v)
	}
	return out
}

// VarName maps a docopt key to the variable name tasks see: "-" and "<", ">" become "_".
func VarName(key string) string {
	return strings.NewReplacer("-", "_", "<", "_", ">", "_").Replace(key)
}

func value(v any) any {
	switch o := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(o)
	case string:
		return o
	case int:
		return strconv.Itoa(o)
	case []string:
		return append([]string{}, o...)
	default:
		return fmt.Sprint(o)
	}
}

// UsageSection returns the "Usage:" section of doc (what is printed after a parse error), or the
// whole text when there is none.
func UsageSection(doc string) string {
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if strings.Contains(strings.ToLower(l), "usage:") {
			j := i + 1
			for j < len(lines) && (strings.HasPrefix(lines[j], " ") || strings.HasPrefix(lines[j], "\t")) {
				j++
			}
			return strings.TrimRight(strings.Join(lines[i:j], "\n"), "\n ")
		}
	}
	return strings.TrimSpace(doc)
}

func definesHelp(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "-h") || strings.HasPrefix(t, "--help") {
			return true
		}
	}
	return false
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}

// explain names the first option the usage does not know, for docopt-go's empty mismatch errors.
func explain(doc string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			name, _, _ := strings.Cut(a, "=")
			if !strings.Contains(doc, name) {
				return fmt.Sprintf("unknown option %s", name)
			}
		}
	}
	return "arguments do not match the usage"
}
