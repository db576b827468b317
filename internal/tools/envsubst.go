package tools

import (
	"context"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

func envsubstTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("envsubst", "[-i] [-f FILE] [-o FILE] [VARS]", `
Copies the input (stdin, or -f FILE) to the output (stdout, or -o FILE, written atomically)
replacing $NAME, ${NAME}, ${NAME:-default} and ${NAME-default} with values from the environment.
An unset variable without a default is an error naming every such variable, and nothing is
written, unless -i (then it becomes empty). VARS ("$A $B" or "A,B"), like GNU envsubst's
SHELL-FORMAT, restricts substitution to those names; others are left untouched.`, `nuv -envsubst -f deploy.tpl -o deploy.yaml
nuv -envsubst '$IMAGE' < kustomization.tpl`)
	ignore := f.BoolP("ignore-unset", "i", false, "replace unset variables with empty text instead of failing")
	in := f.StringP("file", "f", "", "read this file instead of stdin")
	out := f.StringP("output", "o", "", "write this file instead of stdout")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	var only map[string]bool
	if f.NArg() > 0 {
		only = map[string]bool{}
		for _, a := range f.Args() {
			for _, n := range strings.FieldsFunc(a, func(r rune) bool { return r == ',' || r == ' ' || r == '$' || r == '{' || r == '}' }) {
				only[n] = true
			}
		}
	}
	var text []byte
	var err error
	if *in != "" {
		text, err = os.ReadFile(absIn(env.Dir, *in))
	} else if env.In != nil {
		text, err = io.ReadAll(env.In)
	}
	if err != nil {
		return failf("envsubst", "%v", err)
	}
	lookup := func(k string) (string, bool) {
		if v := env.Getenv(k); v != "" {
			return v, true
		}
		return os.LookupEnv(k)
	}
	res, missing := substitute(string(text), lookup, only)
	if len(missing) > 0 && !*ignore {
		return failf("envsubst", "unset variable(s): %s (set them, give a default with ${NAME:-value}, or use -i)", strings.Join(missing, ", "))
	}
	if *out != "" {
		if err := fsutil.WriteFileAtomic(absIn(env.Dir, *out), []byte(res), 0o644); err != nil {
			return failf("envsubst", "%v", err)
		}
		return nil
	}
	_, err = io.WriteString(env.Out, res)
	return err
}

// substitute expands variable references in s; missing lists the unset names without a default
// (sorted, once each), which expand to empty text.
func substitute(s string, lookup func(string) (string, bool), only map[string]bool) (string, []string) {
	var b strings.Builder
	miss := map[string]bool{}
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		_, name, def, hasDef, emptyDef, n := parseRef(s[i:])
		if n == 0 || (only != nil && !only[name]) {
			if n == 0 {
				n = 1
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		v, ok := lookup(name)
		switch {
		case hasDef && (!ok || (emptyDef && v == "")):
			v = def
		case !ok:
			miss[name] = true
		}
		b.WriteString(v)
		i += n
	}
	missing := make([]string, 0, len(miss))
	for k := range miss {
		missing = append(missing, k)
	}
	sort.Strings(missing)
	return b.String(), missing
}

// parseRef parses a reference at the start of s ("$NAME", "${NAME}", "${NAME:-def}",
// "${NAME-def}"); n is its length, 0 when s does not start with one.
func parseRef(s string) (ref, name, def string, hasDef, emptyDef bool, n int) {
	if len(s) < 2 || s[0] != '$' {
		return "", "", "", false, false, 0
	}
	if s[1] != '{' {
		j := 1
		for j < len(s) && isNameChar(s[j], j == 1) {
			j++
		}
		if j == 1 {
			return "", "", "", false, false, 0
		}
		return s[:j], s[1:j], "", false, false, j
	}
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return "", "", "", false, false, 0
	}
	body := s[2:end]
	j := 0
	for j < len(body) && isNameChar(body[j], j == 0) {
		j++
	}
	if j == 0 {
		return "", "", "", false, false, 0
	}
	name, rest := body[:j], body[j:]
	switch {
	case rest == "":
	case strings.HasPrefix(rest, ":-"):
		def, hasDef, emptyDef = rest[2:], true, true
	case strings.HasPrefix(rest, "-"):
		def, hasDef = rest[1:], true
	default:
		return "", "", "", false, false, 0
	}
	return s[:end+1], name, def, hasDef, emptyDef, end + 1
}

func isNameChar(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}
