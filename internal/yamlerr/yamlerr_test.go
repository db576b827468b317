package yamlerr

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestSyntaxLine puts each syntax error at the line of the fault (1-based), where yaml.v3 prints
// the 0-based line of the enclosing block for parser errors.
func TestSyntaxLine(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"bad indentation of a key", "top:\n  a:\n    b: 1\n   c: 2\n", "f.yaml:4: did not find expected key"},
		{"list item in a mapping", "a: 1\nb: 2\n- c\n", "f.yaml:3: did not find expected key"},
		{"key after a list", "a: 1\nb:\n  - x\n  y: 2\n", "f.yaml:4: did not find expected '-' indicator"},
		{"mapping after a top-level list", "- a\n- b\nc: d\n", "f.yaml:3: did not find expected '-' indicator"},
		{"unclosed flow list", "a: 1\nb: [1, 2\nc: 3\n", "f.yaml:3: did not find expected ',' or ']' (the list opened at line 2 is not closed)"},
		{"unclosed flow mapping on line 1", "a: {b: 1, c: 2\nd: 3\n", "f.yaml:2: did not find expected ',' or '}'"},
		{"nested list then key", "top:\n  list:\n  - a\n  - b\n  x: 1\n  - c\n", "f.yaml:6: did not find expected key"},
		{"fault on line 1", "a: b: c\n", "f.yaml:1: mapping values are not allowed in this context (quote a value that holds ': ', or indent the line like its neighbours)"},
		{"value with a colon", "a: 1\nb: c: d\n", "f.yaml:2: mapping values are not allowed in this context (quote a value that holds ': ', or indent the line like its neighbours)"},
		{"over-indented key", "key: value\n  other: 2\n", "f.yaml:2: mapping values are not allowed in this context (quote a value that holds ': ', or indent the line like its neighbours)"},
		{"tab indentation", "a: 1\nb:\n\t- x\n", "f.yaml:3: found character that cannot start any token (a tab: indent YAML with spaces)"},
		{"key without a colon", "a:\n  b: 1\n  c\n", "f.yaml:3: could not find expected ':'"},
		{"unterminated quote", "a: 1\nb: \"open\nc: 2\n", "f.yaml:2: found unexpected end of stream"},
		{"unknown anchor", "a: 1\nb: *nope\n", `f.yaml:2: unknown anchor "nope" referenced (no &nope before it)`},
		{"second document", "a: 1\n---\nb: 2\nc: [\nd: 1\ne: 2\n", "f.yaml:6: did not find expected ',' or ']' (the list opened at line 4 is not closed)"},
		{"unclosed at the end", "a: 1\n---\nb: 2\nc: [\n", "f.yaml:4: did not find expected node content (at the end of the file)"},
		{"block scalar dedent", "k: |\n  text\n x: 1\n", "f.yaml:3: did not find expected key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Syntax("f.yaml", []byte(tt.data))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Syntax = %v\nwant     %s", err, tt.want)
			}
			var e *Errors
			if !errors.As(err, &e) {
				t.Fatalf("%T is not *Errors", err)
			}
		})
	}
	if err := Syntax("ok.yaml", []byte("a: 1\n---\nb: [1, 2]\n")); err != nil {
		t.Errorf("well-formed YAML: %v", err)
	}
}

type inner struct {
	Name  string   `yaml:"name"`
	Deps  []string `yaml:"dependsOn"`
	Count int      `yaml:"count"`
	On    bool     `yaml:"on"`
	Free  any      `yaml:"values"`
	Skip  string   `yaml:"-"`
}

type outer struct {
	Spec struct {
		Items []*inner `yaml:"items"`
	} `yaml:"spec"`
}

// TestCheck names unknown fields (with the valid ones) and wrong kinds by path and line.
func TestCheck(t *testing.T) {
	data := "spec:\n  items:\n  - name: a\n  - name: b\n    dependOn: [a]\n    dependsOn: a\n    count: many\n    on: maybe\n    values: {anything: [1]}\n    name: c\n"
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(data), &n); err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	got := (&Errors{File: "i.yaml", List: Check(&n, reflect.TypeOf(outer{}), "", lines)}).Error()
	want := `i.yaml:5: spec.items[1].dependOn: unknown field (valid: name, dependsOn, count, on, values)
i.yaml:6: spec.items[1].dependsOn: want a list, got "a"
i.yaml:7: spec.items[1].count: want an integer, got "many"
i.yaml:8: spec.items[1].on: want true or false, got "maybe"
i.yaml:10: spec.items[1].name: given twice`
	if got != want {
		t.Errorf("Check:\n%s\nwant:\n%s", got, want)
	}
	if lines["spec.items[1]"] != 4 || lines["spec.items[0].name"] != 3 {
		t.Errorf("lines = %v", lines)
	}
}

// TestFromDecode keeps yaml.v3's 1-based type-error lines and fixes its syntax-error lines.
func TestFromDecode(t *testing.T) {
	data := []byte("a: [1]\nb: 2\n")
	var v struct {
		A string `yaml:"a"`
		B []int  `yaml:"b"`
	}
	err := FromDecode("t.yaml", data, yaml.Unmarshal(data, &v))
	want := "t.yaml:1: cannot unmarshal !!seq into string\nt.yaml:2: cannot unmarshal !!int `2` into []int"
	if err == nil || err.Error() != want {
		t.Errorf("type errors: %v\nwant %s", err, want)
	}
	bad := []byte("a: 1\nb: 2\n- c\n")
	err = FromDecode("t.yaml", bad, yaml.Unmarshal(bad, &v))
	if err == nil || err.Error() != "t.yaml:3: did not find expected key" {
		t.Errorf("syntax error: %v", err)
	}
}

// TestSplit keeps each document's first content line.
func TestSplit(t *testing.T) {
	docs := Split([]byte("# head\na: 1\n---\n\nb: 2\n--- # c\nc: 3\n"))
	var got []string
	for _, d := range docs {
		got = append(got, fmt.Sprintf("%d:%q", d.Line, d.Data))
	}
	want := []string{`2:"# head\na: 1\n"`, `5:"\nb: 2\n"`, `7:"c: 3\n"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Split = %v, want %v", got, want)
	}
}
