package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// ReadFile decodes every Cluster document of a file. Structural problems (syntax, unknown fields,
// wrong types) and invalid values are reported together, each as "file:line: path: message".
func ReadFile(path string) ([]*Cluster, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cluster spec %s does not exist (specs live in clusters/specs/)", path)
	}
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
			return nil, yamlerr.FromDecode(name, data, err)
		}
		if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
			continue
		}
		root := doc.Content[0]
		c := &Cluster{lines: map[string]int{"": root.Line}, Source: fmt.Sprintf("%s:%d", name, root.Line)}
		errs := yamlerr.Check(root, reflect.TypeOf(Cluster{}), "", c.lines)
		if len(errs) == 0 {
			if err := root.Decode(c); err != nil {
				errs = append(errs, PositionedError{Line: root.Line, Msg: strings.TrimPrefix(err.Error(), "yaml: ")})
			}
		}
		if len(errs) == 0 {
			for _, fe := range c.validate() {
				errs = append(errs, PositionedError{Line: c.Line(fe.Path), Path: fe.Path, Msg: fe.Msg})
			}
		}
		all.List = append(all.List, errs...)
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
