package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	goldenpkg "github.com/nuv-dev/nuv/internal/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden help files under testdata/help")

// conventionRun runs one nuv command line in-process as Main would print it: stdout, stderr (the
// error line included) and the exit code.
func conventionRun(t *testing.T, project, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	exe, _ := os.Executable()
	env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 0), Exe: exe, Dir: project,
		Getenv: func(k string) string {
			switch k {
			case "NUV_HOME":
				return home
			case "NUV_PROJECT":
				return project
			case "PATH", "HOME":
				return os.Getenv(k)
			}
			return ""
		}}
	err := RunEnv(context.Background(), env, append([]string{"nuv"}, args...))
	if err != nil {
		var ee *cli.ExitError
		if !(errors.As(err, &ee) && ee.Err == nil) {
			errb.WriteString(errorLine(err) + "\n")
		}
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

// TestCLIConvention walks every built-in command and every verb of every group and asserts nuv's
// one convention: help (-h, --help, help, and a group without a verb) on stdout, exit 0, in the
// one layout; an unknown verb on stderr, exit 2, with the closest verb suggested; a bad flag exit 2
// naming the flag; errors prefixed "nuv GROUP[ VERB]:". Each command's help is pinned by a golden
// file (testdata/help/COMMAND.golden; go test -run TestCLIConvention -update rewrites them).
func TestCLIConvention(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	run := func(args ...string) (string, string, int) { return conventionRun(t, project, home, args...) }
	for _, c := range commandTable() {
		t.Run(c.Name, func(t *testing.T) {
			help, errOut, code := run(c.Name, "--help")
			if code != 0 || errOut != "" || !strings.Contains(help, "Usage: nuv "+c.Name) {
				t.Fatalf("--help: exit %d, stdout %q, stderr %q", code, help, errOut)
			}
			hs := []string{"-h"}
			if c.Group != nil {
				hs = append(hs, "help")
			}
			for _, h := range hs {
				if out, _, code := run(c.Name, h); code != 0 || out != help {
					t.Errorf("%s: exit %d, stdout differs from --help:\n%s", h, code, out)
				}
			}
			out, errOut, code := run(c.Name, "--no-such-flag")
			if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "--no-such-flag") || !strings.HasPrefix(errOut, "nuv "+c.Name) {
				t.Errorf("--no-such-flag: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			golden(t, filepath.Join("testdata", "help", c.Name+".golden"), help)
			if c.Group == nil {
				// one layout: the summary, the usage line, the flags, the text, the examples
				if !strings.HasPrefix(help, c.Short+"\n\nUsage: nuv "+c.Name) || !strings.Contains(help, "\nExamples:\n") {
					t.Errorf("help is not in the one layout (summary, usage, flags, text, examples):\n%s", help)
				}
				return
			}
			if out, errOut, code := run(c.Name); code != 0 || out != help || errOut != "" {
				t.Errorf("no verb: exit %d, stderr %q; want the help on stdout, exit 0", code, errOut)
			}
			for _, want := range []string{"Usage: " + c.Group.Name + " <verb>", "\nVerbs:\n", "\nExamples:\n"} {
				if !strings.Contains(help, want) {
					t.Errorf("help lacks %q", want)
				}
			}
			// an unknown verb, and a misspelt one (two letters swapped): stderr, exit 2, a suggestion
			first := c.Group.VerbNames()[0]
			typo := first + "x"
			if len(first) >= 3 && c.Group.Lookup(first[:1]+first[2:3]+first[1:2]+first[3:]) == nil {
				typo = first[:1] + first[2:3] + first[1:2] + first[3:]
			}
			out, errOut, code = run(c.Name, typo)
			if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "nuv "+c.Name+": unknown verb \""+typo+"\"; did you mean \""+first+"\"?") {
				t.Errorf("%s: exit %d, stdout %q, stderr %q", typo, code, out, errOut)
			}
			if n := strings.Count(errOut, "\n"); n > 3 {
				t.Errorf("unknown verb: %d lines on stderr, want a short message:\n%s", n, errOut)
			}
			for _, v := range c.Group.Verbs {
				if v.Hidden {
					continue
				}
				t.Run(v.Name, func(t *testing.T) {
					out, errOut, code := run(c.Name, v.Name, "--help")
					if code != 0 || errOut != "" || !strings.Contains(out, "Usage: nuv "+c.Name+" "+v.Name) {
						t.Errorf("--help: exit %d, stdout %q, stderr %q", code, out, errOut)
					}
					if alt, _, code := run(c.Name, "help", v.Name); code != 0 || alt != out {
						t.Errorf("help %s: exit %d, differs from %s --help", v.Name, code, v.Name)
					}
					out, errOut, code = run(c.Name, v.Name, "--no-such-flag")
					if code != cli.ExitUsage || out != "" || !strings.HasPrefix(errOut, "nuv "+c.Name+" "+v.Name+": ") ||
						!strings.Contains(errOut, "unknown flag: --no-such-flag") {
						t.Errorf("--no-such-flag: exit %d, stdout %q, stderr %q", code, out, errOut)
					}
				})
			}
		})
	}
}

// TestToolConvention walks every built-in tool (`nuv -NAME`; -task excepted: it speaks go-task's
// own CLI) and asserts the same convention as TestCLIConvention's: -h and --help print the help on
// stdout, exit 0, in the one layout (usage, flags, text, examples); a bad flag is a usage error on
// stderr, exit 2, prefixed "nuv -NAME:", naming the flag and closing with the usage line. Each
// tool's help is pinned by a golden file (testdata/help/tools/NAME.golden; -update rewrites them).
func TestToolConvention(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	run := func(args ...string) (string, string, int) { return conventionRun(t, project, home, args...) }
	for name := range toolTable() {
		if name == "task" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			help, errOut, code := run("-"+name, "--help")
			// the usage line first, or after a one-line summary
			usageAt := strings.Index(help, "Usage: nuv -"+name)
			if code != 0 || errOut != "" || usageAt < 0 || (usageAt > 0 && strings.Count(help[:usageAt], "\n") != 2) {
				t.Fatalf("--help: exit %d, stdout %q, stderr %q", code, help, errOut)
			}
			if !strings.Contains(help, "\nExamples:\n  nuv -"+name) {
				t.Errorf("help lacks the examples:\n%s", help)
			}
			golden(t, filepath.Join("testdata", "help", "tools", name+".golden"), help)
			if out, _, code := run("-"+name, "-h"); code != 0 || out != help {
				t.Errorf("-h: exit %d, stdout differs from --help:\n%s", code, out)
			}
			out, errOut, code := run("-"+name, "--no-such-flag")
			if code != cli.ExitUsage || out != "" || !strings.HasPrefix(errOut, "nuv -"+name+": unknown flag: --no-such-flag") ||
				!strings.Contains(errOut, "\nUsage: nuv -"+name) {
				t.Errorf("--no-such-flag: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}

// TestToolErrorPrefix: a tool's own failure reads "nuv -TOOL: ..." (exit 1), while the message a
// task gave -validate to print on failure is printed as the task wrote it.
func TestToolErrorPrefix(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-validate", "-e", "dev@"}, "nuv -validate: \"dev@\" is not an email address\n"},
		{[]string{"-validate", "-r", "^[a-z]+$", "Kind", "cluster names are lower case"}, "nuv: cluster names are lower case\n"},
		{[]string{"-base64", "-d", "***"}, "nuv -base64: invalid base64 input: illegal base64 data at input byte 0\n"},
		{[]string{"-extract", "no-such.tgz"}, "nuv -extract: no-such.tgz: open " + filepath.Join(project, "no-such.tgz") + ": no such file or directory\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := conventionRun(t, project, home, tc.args...)
			if code != cli.ExitFailure || out != "" || errOut != tc.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

// TestFlagValueErrorsThroughTheCLI: a bad flag value names the flag and what it accepts, for the
// flags the issue found raw strconv/ParseBool messages on, without touching any cluster.
func TestFlagValueErrorsThroughTheCLI(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "create", "local", "x", "--nodes", "abc"}, `nuv cluster create: --nodes "abc": not an integer`},
		{[]string{"operator", "--dry-run=server"}, `nuv operator: --dry-run "server": accepted values: true, false`},
		{[]string{"addons", "list", "-o", "xml"}, `nuv addons list: --output "xml": accepted values: table, wide, json, yaml`},
		{[]string{"emulator", "faults", "--cloud", "ibm"}, `nuv emulator faults: --cloud "ibm": accepted values: aws, azure, gcp`},
		{[]string{"all-kubes", "--timeout", "soon", "--", "dtest"}, `nuv all-kubes: --timeout "soon": not a duration`},
		{[]string{"addons", "plan", "--stak", "x"}, `nuv addons plan: unknown flag: --stak (did you mean --stack?)`},
		{[]string{"registry", "stauts"}, `nuv registry: unknown verb "stauts"; did you mean "status"?`},
		{[]string{"-retry", "-t", "abc", "true"}, `nuv -retry: --tries "abc": not an integer`},
		{[]string{"-retry", "--delay", "soon", "true"}, `nuv -retry: --delay "soon": not a duration`},
		{[]string{"-base64", "--decode=maybe"}, `nuv -base64: --decode "maybe": accepted values: true, false`},
		{[]string{"-random", "--int", "ten"}, `nuv -random: --int wants integers with MIN <= MAX, got ["ten"]`},
		{[]string{"-config", "--all=maybe"}, `nuv -config: --all "maybe": accepted values: true, false`},
		{[]string{"-config", "NOEQUALS"}, `nuv -config: "NOEQUALS" is not KEY=VALUE`},
		{[]string{"-config", "--delet", "X"}, `nuv -config: unknown flag: --delet (did you mean --delete?)`},
		{[]string{"dtest", "--timeout", "soon"}, `nuv dtest: --timeout "soon": not a duration`},
		{[]string{"itest", "--keep=sure"}, `nuv itest: --keep "sure": accepted values: true, false`},
		{[]string{"test", "--skip-utset"}, `nuv test: unknown flag: --skip-utset (did you mean --skip-utest?)`},
		{[]string{"itest", "extra"}, `nuv itest: unexpected arguments ["extra"] (filter with T=prefix)`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := conventionRun(t, project, home, tc.args...)
			if code != cli.ExitUsage || out != "" || !strings.HasPrefix(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	goldenpkg.Check(t, path, got, *update)
}
