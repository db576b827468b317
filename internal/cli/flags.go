package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// FlagError rewrites a pflag parse error in nuv's words: an unknown flag gets the closest known
// one ("did you mean --nodes?"), a bad value names the flag, the value and what is accepted
// instead of a raw strconv or ParseBool message.
func FlagError(fs *pflag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Deprecated == "" {
				names = append(names, f.Name)
			}
		})
		if s := Suggest(name, names); s != "" {
			return fmt.Sprintf("unknown flag: --%s (did you mean --%s?)", name, s)
		}
		return msg
	}
	m := invalidArgRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, spelt, reason := m[1], m[2], m[3]
	name := spelt
	if i := strings.LastIndex(spelt, ", "); i >= 0 {
		name = spelt[i+2:] // "-n, --nodes"
	}
	name = strings.TrimLeft(name, "-")
	if f := fs.Lookup(name); f != nil {
		reason = accepted(f.Value, value, reason)
		spelt = "--" + f.Name
	}
	return fmt.Sprintf("%s %q: %s", spelt, value, reason)
}

var invalidArgRE = lazy.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: (.*)$`)

// accepted says what a flag of v's type accepts, for a value it refused with reason.
func accepted(v pflag.Value, value, reason string) string {
	switch v.Type() {
	case "bool":
		return "accepted values: true, false"
	case "int", "int8", "int16", "int32", "int64":
		return "not an integer"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "not a whole number (0, 1, 2, ...)"
	case "float32", "float64":
		return "not a number"
	case "duration":
		if _, err := time.ParseDuration(value); err == nil {
			return reason // a duration the flag's own value refused (say, not positive): it says why
		}
		return "not a duration (for example 30s, 5m, 1h30m)"
	case "intSlice":
		return "not a comma-separated list of integers"
	}
	return reason // enums and the flags of commands say it themselves
}

// Suggest returns the candidate closest to word when it is close enough to be a likely typo (or
// word is a prefix of exactly one candidate), else "".
func Suggest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	var prefixed []string
	for _, c := range candidates {
		if c == word {
			return ""
		}
		if word != "" && strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
		if d := distance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(word) <= 3 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance of a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// enumValue is a string flag that accepts one of a fixed set of values.
type enumValue struct {
	p      *string
	values []string
}

func (e *enumValue) String() string { return *e.p }
func (e *enumValue) Type() string   { return strings.Join(e.values, "|") }
func (e *enumValue) Set(s string) error {
	for _, v := range e.values {
		if v == s {
			*e.p = s
			return nil
		}
	}
	return fmt.Errorf("accepted values: %s", strings.Join(e.values, ", "))
}

// EnumVarP defines a string flag that accepts only values (a bad one is a usage error naming the
// flag and the accepted values); def is its default.
func EnumVarP(fs *pflag.FlagSet, p *string, name, shorthand, def string, values []string, usage string) *pflag.Flag {
	*p = def
	fs.VarP(&enumValue{p: p, values: values}, name, shorthand, usage)
	return fs.Lookup(name)
}
