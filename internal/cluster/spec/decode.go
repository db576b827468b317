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
func ReadFile(path string) ([]*Cluster, error) { return Decoder{}.ReadFile(path) }

// Decoder decodes cluster specs knowing the providers: their names (a section of another
// provider is refused as such) and the decoders of their sections (a section's problems are
// reported with the others, by file, line and path). The zero Decoder knows no provider: it keeps
// the section of the spec's provider as it is, for the provider's Validate to check.
type Decoder struct {
	// Providers are the provider names, in the order messages list them.
	Providers []string
	// Sections are the section decoders, by provider name.
	Sections map[string]SectionDecoder
}

// ReadFile is ReadFile with d's providers.
func (d Decoder) ReadFile(path string) ([]*Cluster, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cluster spec %s does not exist (specs live in clusters/specs/)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster spec: %w", err)
	}
	return d.Decode(path, b)
}

// Decode decodes the Cluster documents of data; name is the file name used in messages. Empty
// documents are skipped; a file without any document is an error.
func Decode(name string, data []byte) ([]*Cluster, error) { return Decoder{}.Decode(name, data) }

// Decode is Decode with d's providers.
func (d Decoder) Decode(name string, data []byte) ([]*Cluster, error) {
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
		errs := d.takeSections(c, root)
		errs = append(errs, yamlerr.Check(root, reflect.TypeOf(Cluster{}), "", c.lines)...)
		if len(errs) == 0 {
			if err := root.Decode(c); err != nil {
				errs = append(errs, PositionedError{Line: root.Line, Msg: strings.TrimPrefix(err.Error(), "yaml: ")})
			}
		}
		if len(errs) == 0 {
			for _, fe := range append(c.validate(), d.decodeSection(c)...) {
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
