package docopt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const netUsage = `Network tools.

Usage:
  net ping [--count=<n>] [-v...] <hosts>...
  net trace [--dry-run] <host>
  net show

Options:
  --count=<n>   how many pings [default: 3]
  -v            verbose, repeatable
  --dry-run     only print
`

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want map[string]any
	}{
		{"list and default", []string{"ping", "a", "b"}, map[string]any{
			"ping": "true", "trace": "false", "show": "false",
			"__count": "3", "_v": "0", "_hosts_": []string{"a", "b"},
			"__dry_run": "false", "_host_": "",
		}},
		{"option value and count", []string{"ping", "--count=5", "-vv", "x"}, map[string]any{
			"ping": "true", "trace": "false", "show": "false",
			"__count": "5", "_v": "2", "_hosts_": []string{"x"},
			"__dry_run": "false", "_host_": "",
		}},
		{"boolean flag with dash", []string{"trace", "--dry-run", "h1"}, map[string]any{
			"ping": "false", "trace": "true", "show": "false",
			"__count": "3", "_v": "0", "_hosts_": []string{},
			"__dry_run": "true", "_host_": "h1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(netUsage, tc.args)
			if err != nil {
				t.Fatalf("Parse(%v): %v", tc.args, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%v)\n got  %#v\n want %#v", tc.args, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		args    []string
		usage   bool // a *UsageError carrying the usage section
		help    bool
		wantMsg string
	}{
		{name: "missing argument", doc: netUsage, args: []string{"trace"}, usage: true},
		{name: "unknown option", doc: netUsage, args: []string{"show", "--nope"}, usage: true, wantMsg: "--nope"},
		{name: "extra word", doc: netUsage, args: []string{"show", "extra"}, usage: true},
		{name: "help", doc: netUsage, args: []string{"show", "-h"}, help: true},
		{name: "no usage section", doc: "just text\n", args: []string{"x"}, wantMsg: "invalid docopt usage"},
		{name: "unbalanced brackets", doc: "Usage:\n  x [--a\n", args: []string{"x"}, wantMsg: "invalid docopt usage"},
		{name: "unbalanced parens", doc: "Usage:\n  x (a|b\n", args: []string{"a"}, wantMsg: "invalid docopt usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.doc, tc.args)
			if err == nil {
				t.Fatalf("Parse(%v) succeeded, want an error", tc.args)
			}
			var ue *UsageError
			if got := errors.As(err, &ue); got != tc.usage {
				t.Fatalf("UsageError = %v, want %v (err %v)", got, tc.usage, err)
			}
			if tc.usage && !strings.HasPrefix(ue.Usage, "Usage:") {
				t.Errorf("usage section = %q", ue.Usage)
			}
			if got := errors.Is(err, ErrHelp); got != tc.help {
				t.Errorf("ErrHelp = %v, want %v", got, tc.help)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
		})
	}
}

func TestVarName(t *testing.T) {
	for in, want := range map[string]string{"<x>": "_x_", "--a-b": "__a_b", "-c": "_c", "run": "run", "<my-arg>": "_my_arg_"} {
		if got := VarName(in); got != want {
			t.Errorf("VarName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUsageSectionOfMarkdown(t *testing.T) {
	doc := "# Tasks\n\n```text\nUsage:\n  x run <a>\n  x stop\n```\n\nMore text.\n"
	got := UsageSection(doc)
	want := "Usage:\n  x run <a>\n  x stop"
	if got != want {
		t.Errorf("UsageSection = %q, want %q", got, want)
	}
	vars, err := Parse(doc, []string{"run", "1"})
	if err != nil {
		t.Fatal(err)
	}
	if vars["_a_"] != "1" || vars["run"] != "true" {
		t.Errorf("vars from markdown usage = %v", vars)
	}
}
