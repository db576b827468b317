// Package yamlerr reports problems of the YAML files nuv reads the way compilers do, one per line
// as "file:LINE: path: message", with LINE the 1-based line of the fault.
//
// It exists because the YAML libraries nuv uses misplace syntax errors: go.yaml.in/yaml/v3 (and the
// yaml.v2 behind sigs.k8s.io/yaml) print the 0-based line of the parser's marks as "line N" for
// parser errors ("did not find expected key", "did not find expected ',' or ']'", ...), one line
// too early, and yaml.v3 prefers the mark where the enclosing block started over the one where the
// parser got stuck. Only scanner errors ("mapping values are not allowed in this context", tabs,
// unterminated quotes) carry a 1-based line. Syntax re-reads a file and fixes the line; Check
// compares a YAML tree with the Go type it is decoded into and names unknown fields and wrong types
// by their path and line, where the libraries say "field x not found in type pkg.T".
package yamlerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// Problem is one fault of a file: its line (0 when unknown), the field path it concerns
// ("spec.addons[1].dependsOn"; "" for syntax errors) and what is wrong.
type Problem struct {
	Line int
	Path string
	Msg  string
}

// String formats the problem for file: "file:LINE: path: message".
func (p Problem) String(file string) string {
	loc := file
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line)
	}
	if p.Path == "" {
		return loc + ": " + p.Msg
	}
	return loc + ": " + p.Path + ": " + p.Msg
}

// Errors are the problems of one file, printed one per line.
type Errors struct {
	File string
	List []Problem
}

func (e *Errors) Error() string {
	var b strings.Builder
	for i, p := range e.List {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.String(e.File))
	}
	return b.String()
}

// Syntax parses every document of data and returns nil when it is well-formed YAML, else an
// *Errors holding the first syntax error at the line of the fault. file names data in the message.
func Syntax(file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &Errors{File: file, List: []Problem{syntaxProblem(data, err)}}
		}
	}
}

// FromDecode turns an error of go.yaml.in/yaml/v3 decoding data into *Errors with true lines: a
// syntax error at the line of the fault, type errors ("line 3: cannot unmarshal ...") one per line.
// Errors of other kinds are returned as they are.
func FromDecode(file string, data []byte, err error) error {
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		out := &Errors{File: file}
		for _, e := range te.Errors {
			out.List = append(out.List, lineMessage(e))
		}
		return out
	}
	if serr := Syntax(file, data); serr != nil {
		return serr
	}
	return err
}

var lineRE = lazy.MustCompile(`^line (\d+): (.*)$`)

// lineMessage splits "line N: msg" (a 1-based line, as yaml.v3's type errors carry).
func lineMessage(s string) Problem {
	s = strings.TrimPrefix(s, "yaml: ")
	if m := lineRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Problem{Line: n, Msg: m[2]}
	}
	return Problem{Msg: s}
}

// parserProblems are the problems libyaml's parser (not its scanner) reports; their "line N" is
// the 0-based line of a mark.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

var anchorRE = lazy.MustCompile(`^unknown anchor '(.*)' referenced$`)

// syntaxProblem places a yaml.v3 syntax error of data at the line of the fault.
func syntaxProblem(data []byte, err error) Problem {
	p := lineMessage(err.Error())
	if m := anchorRE.FindStringSubmatch(p.Msg); m != nil {
		p.Line = lineOf(data, "*"+m[1])
		p.Msg = fmt.Sprintf("unknown anchor %q referenced (no &%s before it)", m[1], m[1])
		return p
	}
	parser := false
	for _, pp := range parserProblems {
		if p.Msg == pp {
			parser = true
			break
		}
	}
	if parser {
		// yaml.v2 prints the parser's problem mark (where it got stuck) when it has one; yaml.v3
		// the mark of the enclosing block. Both 0-based: ask v2 and add one.
		opened := p.Line + 1
		p.Line = problemLine(data) + 1
		if opened < p.Line {
			switch p.Msg {
			case "did not find expected ',' or ']'":
				p.Msg += fmt.Sprintf(" (the list opened at line %d is not closed)", opened)
			case "did not find expected ',' or '}'":
				p.Msg += fmt.Sprintf(" (the mapping opened at line %d is not closed)", opened)
			}
		}
	}
	if p.Line == 0 && (parser || isScannerProblem(p.Msg)) {
		p.Line = 1 // both marks on the first line: the libraries then print no line at all
	}
	if n := lastLine(data); p.Line > n && n > 0 {
		p.Line = n // the parser reached the end of the file looking for what was missing
		p.Msg += " (at the end of the file)"
	}
	if p.Msg == "mapping values are not allowed in this context" {
		p.Msg += " (quote a value that holds ': ', or indent the line like its neighbours)"
	}
	if p.Line > 0 && strings.HasPrefix(p.Msg, "found character that cannot start any token") && lineHasTab(data, p.Line) {
		p.Msg += " (a tab: indent YAML with spaces)"
	}
	return p
}

// problemLine is the 0-based line yaml.v2 gives a parser error of data (0 when it gives none).
func problemLine(data []byte) int {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	for {
		var v interface{}
		err := dec.Decode(&v)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0
		}
		p := lineMessage(err.Error())
		return p.Line
	}
}

var scannerPrefixes = []string{"found ", "did not find ", "could not find ", "mapping ", "block sequence ", "exceeded max depth"}

func isScannerProblem(msg string) bool {
	for _, p := range scannerPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// lineOf is the 1-based line of the first occurrence of s in data, or 0.
func lineOf(data []byte, s string) int {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// lastLine is the number of the last line of data that holds anything but white space.
func lastLine(data []byte) int {
	t := bytes.TrimRight(data, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return bytes.Count(t, []byte("\n")) + 1
}

func lineHasTab(data []byte, line int) bool {
	lines := bytes.Split(data, []byte("\n"))
	return line-1 < len(lines) && bytes.ContainsRune(lines[line-1], '\t')
}

// Check compares the YAML tree n with the Go type t it is decoded into (fields named by their yaml
// tags) and returns a problem for each unknown field (listing the valid ones) and each value of the
// wrong kind, named by its path below path ("spec.addons[1].dependsOn"). When lines is not nil it
// records the line of every path it meets. Interface-typed fields accept anything.
func Check(n *yaml.Node, t reflect.Type, path string, lines map[string]int) []Problem {
	w := walker{lines: lines}
	w.walk(n, t, path)
	return w.errs
}

type walker struct {
	lines map[string]int
	errs  []Problem
}

func (w *walker) fail(n *yaml.Node, path, format string, a ...any) {
	w.errs = append(w.errs, Problem{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, a...)})
}

// Join appends a field name to a path.
func Join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if w.lines != nil {
		w.lines[path] = n.Line
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "want a mapping, got %s", Describe(n))
			return
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" || !f.IsExported() {
				continue
			}
			fields[tag] = f.Type
			names = append(names, tag)
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := Join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				w.fail(k, p, "unknown field (valid: %s)", strings.Join(names, ", "))
				continue
			}
			if seen[k.Value] {
				w.fail(k, p, "given twice")
			}
			seen[k.Value] = true
			w.walk(v, ft, p)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "want a mapping, got %s", Describe(n))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := Join(path, k.Value)
			if seen[k.Value] {
				w.fail(k, p, "given twice")
			}
			seen[k.Value] = true
			w.walk(v, t.Elem(), p)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.fail(n, path, "want a list, got %s", Describe(n))
			return
		}
		for i, v := range n.Content {
			w.walk(v, t.Elem(), path+"["+strconv.Itoa(i)+"]")
		}
	case reflect.Interface:
		// free-form (chart values, a provider section its provider validates)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.fail(n, path, "want a string, got %s", Describe(n))
		}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8,
		reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			w.fail(n, path, "want an integer, got %s", Describe(n))
		}
	case reflect.Float64, reflect.Float32:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			w.fail(n, path, "want a number, got %s", Describe(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			w.fail(n, path, "want true or false, got %s", Describe(n))
		}
	}
}

// Describe names a node's value for messages: "a mapping", "a list" or the quoted scalar.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

// Doc is one document of a multi-document YAML file.
type Doc struct {
	// Data is the document's text (without its "---" separator).
	Data []byte
	// Line is the 1-based line of the document's first content (not blank, not a comment); the
	// line after its separator when it has none.
	Line int
}

// Split cuts data into its documents at "---" separator lines, keeping the line where each one
// starts so that messages about a document can name it. It does not parse: call Syntax first.
func Split(data []byte) []Doc {
	var docs []Doc
	cur := Doc{Line: 1}
	var buf bytes.Buffer
	content := false
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		t := bytes.TrimRight(line, " \t\r\n")
		if string(t) == "---" || bytes.HasPrefix(t, []byte("--- ")) {
			cur.Data = append([]byte(nil), buf.Bytes()...)
			docs = append(docs, cur)
			buf.Reset()
			cur, content = Doc{Line: i + 2}, false
			continue
		}
		if s := bytes.TrimSpace(line); !content && len(s) > 0 && s[0] != '#' {
			cur.Line, content = i+1, true
		}
		buf.Write(line)
	}
	cur.Data = append([]byte(nil), buf.Bytes()...)
	return append(docs, cur)
}
