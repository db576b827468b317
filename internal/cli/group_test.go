package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestGroup(t *testing.T) {
	ran := ""
	sub := func(name string) func(context.Context, *Env, []string) error {
		return func(_ context.Context, env *Env, args []string) error {
			ran = name + fmt.Sprint(args)
			if len(args) > 0 && args[0] == "--help" {
				fmt.Fprint(env.Out, "VERB HELP")
			}
			if len(args) > 0 && args[0] == "fail" {
				return errors.New("up: it broke")
			}
			return nil
		}
	}
	g := &Group{Name: "nuv demo", Short: "demo: a group", Examples: "nuv demo up", Verbs: []Verb{
		{Name: "up", Short: "start it", Run: sub("up")},
		{Name: "down", Short: "stop it", Run: sub("down"), Aliases: []string{"stop"}},
		{Name: "serve", Hidden: true, Run: sub("serve")},
	}}
	var help bytes.Buffer
	g.Help(&help)
	wantHelp := "demo: a group\n\nUsage: nuv demo <verb> [flags] [args]\n\nVerbs:\n  up    start it\n  down  stop it\n\n" +
		"Examples:\n  nuv demo up\n\nRun 'nuv demo <verb> --help' for a verb's flags.\n"
	if help.String() != wantHelp {
		t.Fatalf("help:\n%s\nwant:\n%s", help.String(), wantHelp)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		ran    string
		out    string
		errHas string
	}{
		{name: "no verb: help on stdout, exit 0", out: wantHelp},
		{name: "--help", args: []string{"--help"}, out: wantHelp},
		{name: "-h", args: []string{"-h"}, out: wantHelp},
		{name: "help word", args: []string{"help"}, out: wantHelp},
		{name: "help VERB is VERB --help", args: []string{"help", "up"}, ran: "up[--help]", out: "VERB HELP"},
		{name: "a verb with its words", args: []string{"up", "-x", "y"}, ran: "up[-x y]"},
		{name: "an alias", args: []string{"stop"}, ran: "down[]"},
		{name: "a hidden verb runs", args: []string{"serve"}, ran: "serve[]"},
		{name: "unknown verb: did you mean", args: []string{"dwon"}, code: ExitUsage,
			errHas: "nuv demo: unknown verb \"dwon\"; did you mean \"down\"?\nUsage: nuv demo <verb> [flags] [args] (verbs: up, down; nuv demo --help)"},
		{name: "unknown verb, nothing close", args: []string{"sideways"}, code: ExitUsage, errHas: "nuv demo: unknown verb \"sideways\"\n"},
		{name: "help of an unknown verb", args: []string{"help", "upp"}, code: ExitUsage, errHas: `did you mean "up"?`},
		{name: "a flag where the verb belongs", args: []string{"--force"}, code: ExitUsage, errHas: "nuv demo: unknown flag --force"},
		{name: "the verb's error gets the prefix once", args: []string{"up", "fail"}, code: ExitFailure, ran: "up[fail]",
			errHas: "nuv demo up: it broke"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ran = ""
			var out, errb bytes.Buffer
			env := &Env{Streams: Streams{Out: &out, Err: &errb}}
			err := g.Run(context.Background(), env, tc.args)
			if ExitCode(err) != tc.code || ran != tc.ran || out.String() != tc.out || errb.String() != "" {
				t.Fatalf("exit %d ran %q out %q err %q (%v)", ExitCode(err), ran, out.String(), errb.String(), err)
			}
			if tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Fatalf("error %v lacks %q", err, tc.errHas)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		err    error
		want   string
		code   int
	}{
		{"nuv registry up", errors.New("port busy"), "nuv registry up: port busy", 1},
		{"nuv registry up", errors.New("registry up: port busy"), "nuv registry up: port busy", 1},
		{"nuv registry up", errors.New("up: port busy"), "nuv registry up: port busy", 1},
		{"nuv registry up", errors.New("registry: port busy"), "nuv registry up: port busy", 1},
		{"nuv registry up", errors.New("nuv registry: port busy"), "nuv registry: port busy", 1},
		{"nuv addons plan", Usagef("bad"), "nuv addons plan: bad", 2},
		{"nuv status", Exit(3, errors.New("degraded")), "nuv status: degraded", 3},
	} {
		err := Prefix(tc.prefix, tc.err)
		if err.Error() != tc.want || ExitCode(err) != tc.code {
			t.Errorf("Prefix(%q, %q) = %q exit %d, want %q exit %d", tc.prefix, tc.err, err, ExitCode(err), tc.want, tc.code)
		}
	}
	silent := Exit(1, nil)
	if Prefix("nuv x", silent) != silent || Prefix("nuv x", nil) != nil {
		t.Error("a silent exit or nil must pass unchanged")
	}
}

func TestSuggest(t *testing.T) {
	verbs := []string{"list", "plan", "apply", "remove", "status"}
	for word, want := range map[string]string{
		"lsit": "list", "aply": "apply", "stauts": "status", "remov": "remove", "rm": "", "zzzzzz": "", "st": "status", "list": "",
	} {
		if got := Suggest(word, verbs); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestFlagValueErrors(t *testing.T) {
	u := Usage{Line: "nuv demo"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "abc"}, `--nodes "abc": not an integer`},
		{[]string{"--dry-run=server"}, `--dry-run "server": accepted values: true, false`},
		{[]string{"-o", "xml"}, `--output "xml": accepted values: table, wide, json, yaml`},
		{[]string{"--mode", "fast"}, `--mode "fast": accepted values: build, download`},
		{[]string{"--wait", "x"}, `--wait "x": not a duration`},
		{[]string{"--count", "-1"}, `--count "-1": not a whole number`},
		{[]string{"--nods", "1"}, `unknown flag: --nods (did you mean --nodes?)`},
	} {
		fs := NewFlagSet("demo")
		fs.Int("nodes", 1, "")
		fs.Bool("dry-run", false, "")
		fs.Duration("wait", 0, "")
		fs.Uint("count", 0, "")
		var mode string
		EnumVarP(fs, &mode, "mode", "", "build", []string{"build", "download"}, "")
		var o OutputOption
		o.AddFlags(fs)
		var errb bytes.Buffer
		_, err := Parse(&Env{Streams: Streams{Out: &errb, Err: &errb}}, fs, u, tc.args)
		if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "demo: "+tc.want) {
			t.Errorf("%v: %v, want %q (exit 2)", tc.args, err, tc.want)
		}
	}
}

func TestOutputOption(t *testing.T) {
	u := Usage{Line: "nuv demo [-o table|wide|json|yaml]"}
	for _, tc := range []struct {
		args []string
		want string
		warn string
		err  string
	}{
		{nil, "table", "", ""},
		{[]string{"-o", "json"}, "json", "", ""},
		{[]string{"-o", "wide"}, "wide", "", ""},
		{[]string{"--output=yaml"}, "yaml", "", ""},
		{[]string{"--json"}, "json", "warning: --json is deprecated: use -o json\n", ""},
		{[]string{"--format", "json"}, "json", "warning: --format is deprecated: use -o\n", ""},
		{[]string{"-o", "xml"}, "", "", `--output "xml": accepted values: table, wide, json, yaml`},
	} {
		fs := NewFlagSet("demo")
		var o OutputOption
		o.AddFlags(fs)
		o.Alias(fs, "format")
		var out, errb bytes.Buffer
		done, err := Parse(&Env{Streams: Streams{Out: &out, Err: &errb}}, fs, u, tc.args)
		if err == nil {
			err = o.Validate(u)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || ExitCode(err) != ExitUsage {
				t.Errorf("%v: err %v", tc.args, err)
			}
			continue
		}
		if done || err != nil || o.Format != tc.want || errb.String() != tc.warn {
			t.Errorf("%v: format %q, %v, stderr %q; want %q, stderr %q", tc.args, o.Format, err, errb.String(), tc.want, tc.warn)
		}
	}
	var buf bytes.Buffer
	o := OutputOption{Format: "yaml"}
	if ok, err := o.Write(&buf, map[string]int{"a": 1}); !ok || err != nil || buf.String() != "a: 1\n" {
		t.Errorf("yaml: %v %v %q", ok, err, buf.String())
	}
	buf.Reset()
	o.Format = "json"
	if ok, err := o.Write(&buf, map[string]int{"a": 1}); !ok || err != nil || buf.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("json: %v %v %q", ok, err, buf.String())
	}
	o.Format = "wide"
	if ok, _ := o.Write(&buf, 1); ok || !o.Wide() || o.Machine() {
		t.Error("wide is a table")
	}
}
