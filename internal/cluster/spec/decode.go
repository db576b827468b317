package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ReadFile decodes every Cluster document of a file. Structural problems (syntax, unknown fields,
// wrong types) and invalid values are reported together, each as "file:line: path: message".
func ReadFile(path string) ([]*Cluster, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster spec: %w", err)
	}
	return Decode(path, b)
}

// Decode decodes the Cluster documents of data; name is the file name used in messages. Empty
// documents are skipped; a file without any document is an error.
func Decode(name string, data []byte) ([]*Cluster, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*Cluster
	all := &Errors{File: name}
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
			continue
		}
		root := doc.Content[0]
		c := &Cluster{lines: map[string]int{"": root.Line}, Source: fmt.Sprintf("%s:%d", name, root.Line)}
		w := walker{lines: c.lines}
		w.walk(root, reflect.TypeOf(Cluster{}), "")
		if len(w.errs) == 0 {
			if err := root.Decode(c); err != nil {
				w.errs = append(w.errs, PositionedError{Line: root.Line, Msg: strings.TrimPrefix(err.Error(), "yaml: ")})
			}
		}
		if len(w.errs) == 0 {
			for _, fe := range c.validate() {
				w.errs = append(w.errs, PositionedError{Line: c.Line(fe.Path), Path: fe.Path, Msg: fe.Msg})
			}
		}
		all.List = append(all.List, w.errs...)
		out = append(out, c)
	}
	if len(all.List) > 0 {
		return nil, all
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no cluster spec in the file (want documents of kind %s, apiVersion %s)", name, Kind, APIVersion)
	}
	seen := map[string]string{}
	for _, c := range out {
		if prev, ok := seen[c.Metadata.Name]; ok {
			return nil, fmt.Errorf("%s: cluster %q is specified twice (also at %s)", c.Source, c.Metadata.Name, prev)
		}
		seen[c.Metadata.Name] = c.Source
	}
	return out, nil
}

// walker checks a YAML tree against a Go type: unknown fields and wrong kinds of value are errors
// naming the field path; it records the line of every field it meets.
type walker struct {
	lines map[string]int
	errs  []PositionedError
}

func (w *walker) fail(n *yaml.Node, path, format string, a ...any) {
	w.errs = append(w.errs, PositionedError{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, a...)})
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	w.lines[path] = n.Line
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.fail(n, path, "want a mapping, got %s", describe(n))
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
			p := join(path, k.Value)
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
			w.fail(n, path, "want a mapping, got %s", describe(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			w.walk(v, t.Elem(), join(path, k.Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.fail(n, path, "want a list, got %s", describe(n))
			return
		}
		for i, v := range n.Content {
			w.walk(v, t.Elem(), path+"["+strconv.Itoa(i)+"]")
		}
	case reflect.Interface:
		// free-form (a provider section validated by its provider)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.fail(n, path, "want a string, got %s", describe(n))
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			w.fail(n, path, "want an integer, got %s", describe(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			w.fail(n, path, "want true or false, got %s", describe(n))
		}
	}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}
