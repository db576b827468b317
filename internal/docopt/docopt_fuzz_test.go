package docopt

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary usage texts (a task's docopt usage) and words (its arguments,
// NUL-separated) to Parse: it must never panic or hang, and what it accepts maps every variable
// to a value docopt knows (bool, string, int, list of strings or nil).
func FuzzParse(f *testing.F) {
	f.Add("Usage:\n  prog deploy <name> [--force] [--replicas=<n>]\n\nOptions:\n  --replicas=<n>  how many [default: 1]\n", "deploy\x00web\x00--force")
	f.Add("Usage: prog [-v...] <file>...", "-vv\x00a\x00b")
	f.Add("Usage: prog (a|b) [--] [<rest>...]", "a\x00--\x00-x")
	f.Add("usage: x [", "")
	f.Fuzz(func(t *testing.T, doc, words string) {
		var args []string
		if words != "" {
			args = strings.Split(words, "\x00")
		}
		vars, err := Parse(doc, args)
		if err != nil {
			return
		}
		for k, v := range vars {
			switch v.(type) {
			case nil, bool, string, int, []string:
			default:
				t.Fatalf("variable %q has a value of type %T", k, v)
			}
		}
	})
}
