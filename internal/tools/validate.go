package tools

import (
	"context"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/nuv-dev/nuv/internal/cli"
)

// check is one -validate test: ok tells whether the value passes; what names the expectation in
// the failure message.
type check struct {
	what string
	ok   func(string) bool
}

func validateTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("validate", "(-e | -n | -i | -u | -s | -z | -r REGEX)... VALUE [MESSAGE]", `
Checks VALUE and prints nothing when it passes. When it fails, prints MESSAGE (default: what was
expected) on stderr and exits 1. Several checks may be combined; all must pass. Put -- before a
VALUE that starts with "-".`, `nuv -validate -e dev@example.com
nuv -validate -r '^[a-z0-9-]+$' "$NAME" "cluster names are lower case"`)
	email := f.BoolP("email", "e", false, "an email address")
	number := f.BoolP("number", "n", false, "a number (integer or decimal)")
	integer := f.BoolP("integer", "i", false, "an integer")
	isURL := f.BoolP("url", "u", false, "an absolute URL with scheme and host")
	semverFlag := f.BoolP("semver", "s", false, "a semantic version (1.2.3, v1.2)")
	nonEmpty := f.BoolP("non-empty", "z", false, "not empty or blank")
	regex := f.StringP("regex", "r", "", "matches the regular expression (anchor it with ^...$ for a whole match)")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() < 1 || f.NArg() > 2 {
		return f.usagef("want VALUE and an optional MESSAGE")
	}
	var checks []check
	add := func(on bool, c check) {
		if on {
			checks = append(checks, c)
		}
	}
	add(*email, check{"an email address", isEmail})
	add(*number, check{"a number", func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }})
	add(*integer, check{"an integer", func(s string) bool { _, err := strconv.ParseInt(s, 10, 64); return err == nil }})
	add(*isURL, check{"a URL", func(s string) bool { u, err := url.Parse(s); return err == nil && u.Scheme != "" && u.Host != "" }})
	add(*semverFlag, check{"a semantic version", func(s string) bool { _, err := semver.NewVersion(s); return err == nil }})
	add(*nonEmpty, check{"a non-empty value", func(s string) bool { return strings.TrimSpace(s) != "" }})
	if f.Changed("regex") {
		re, err := regexp.Compile(*regex)
		if err != nil {
			return f.usagef("bad regular expression %q: %v", *regex, err)
		}
		checks = append(checks, check{fmt.Sprintf("a match of %q", *regex), re.MatchString})
	}
	if len(checks) == 0 {
		return f.usagef("no check given")
	}
	value := f.Arg(0)
	for _, c := range checks {
		if c.ok(value) {
			continue
		}
		if f.NArg() == 2 {
			return cli.Exit(cli.ExitFailure, userMessage(f.Arg(1)))
		}
		return cli.Exit(cli.ExitFailure, fmt.Errorf("nuv -validate: %q is not %s", value, c.what))
	}
	return nil
}

func isEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && strings.Contains(s[strings.LastIndexByte(s, '@'):], ".")
}

func needupdateTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("needupdate", "A B", `
Compares two semantic versions (a leading "v" and missing minor/patch are accepted). Exits 0 when A
is newer than B (an update from B to A is needed), 1 when it is not (A equal or older). Invalid
versions are a usage error (exit 2). Prints nothing.`, `nuv -needupdate 1.10.0 1.9.3 && echo "update"`)
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() != 2 {
		return f.usagef("want exactly two versions")
	}
	a, err := semver.NewVersion(f.Arg(0))
	if err != nil {
		return f.usagef("%q is not a semantic version", f.Arg(0))
	}
	b, err := semver.NewVersion(f.Arg(1))
	if err != nil {
		return f.usagef("%q is not a semantic version", f.Arg(1))
	}
	if a.GreaterThan(b) {
		return nil
	}
	return cli.Exit(cli.ExitFailure, nil)
}
