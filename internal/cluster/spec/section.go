package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/nuv-dev/nuv/internal/lazy"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// Sections are the provider sections of a spec (`spec.<provider>:`), by provider name, each in its
// JSON form. The spec package knows no provider: a section is what the provider registered under
// its name decodes (SectionDecoder); a spec may hold only the section of its own provider.
type Sections map[string]json.RawMessage

// A SectionDecoder decodes and checks the section of c's provider strictly: an unknown field, a
// value of the wrong kind or an invalid value is a FieldError with its path (spec.kind.ports[0]).
// It returns the typed section, whose JSON form becomes the section's canonical form (so a record
// holds it as the provider's type marshals it), or nil when it found problems.
type SectionDecoder func(c *Cluster) (any, []FieldError)

// Section returns the JSON form of c's section name, nil if the spec has none.
func (c *Cluster) Section(name string) json.RawMessage {
	if c == nil || c.Spec.Sections == nil {
		return nil
	}
	return c.Spec.Sections[name]
}

// HasSection reports whether the spec has a section called name.
func (c *Cluster) HasSection(name string) bool { return c.Section(name) != nil }

// SetSection sets c's section name to the JSON form of v (nil removes it).
func (c *Cluster) SetSection(name string, v any) error {
	if v == nil || (reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()) {
		delete(c.Spec.Sections, name)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("spec.%s: %w", name, err)
	}
	if c.Spec.Sections == nil {
		c.Spec.Sections = Sections{}
	}
	c.Spec.Sections[name] = b
	return nil
}

// DecodeSection decodes c's section name strictly into a new T: an unknown field or a value of the
// wrong kind is a FieldError with its path below spec.<name>. It returns nil without problems when
// the spec has no such section.
func DecodeSection[T any](c *Cluster, name string) (*T, []FieldError) {
	raw := c.Section(name)
	if raw == nil {
		return nil, nil
	}
	path := "spec." + name
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return nil, []FieldError{Errorf(path, "unreadable section: %v", err)}
	}
	n := doc.Content[0]
	var errs []FieldError
	for _, p := range yamlerr.Check(n, reflect.TypeFor[T](), path, nil) {
		errs = append(errs, FieldError{Path: p.Path, Msg: p.Msg})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	out := new(T)
	if err := n.Decode(out); err != nil {
		return nil, []FieldError{Errorf(path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	return out, nil
}

// SectionValue is c's section name decoded into T: the zero T when the spec has none or it does not
// decode (the provider's Validate reports why).
func SectionValue[T any](c *Cluster, name string) T {
	if v, _ := DecodeSection[T](c, name); v != nil {
		return *v
	}
	var zero T
	return zero
}

// SectionKey names a provider's section and reads and writes it as its Go type T: a provider
// declares `var Key = spec.SectionKey[Section]("NAME")` and has its decoder, reader and writer.
type SectionKey[T any] string

// Get is c's section decoded (the zero T when absent or not decodable: SectionValue).
func (k SectionKey[T]) Get(c *Cluster) T { return SectionValue[T](c, string(k)) }

// Set sets c's section (nil removes it); a typed section always marshals.
func (k SectionKey[T]) Set(c *Cluster, v *T) {
	if v == nil {
		delete(c.Spec.Sections, string(k))
		return
	}
	_ = c.SetSection(string(k), v)
}

// Decode decodes c's section strictly (DecodeSection).
func (k SectionKey[T]) Decode(c *Cluster) (*T, []FieldError) { return DecodeSection[T](c, string(k)) }

// Decoder is the registry's SectionDecoder of the section (Typed).
func (k SectionKey[T]) Decoder() SectionDecoder { return Typed[T](string(k)) }

// Typed is the SectionDecoder of a provider whose section decodes strictly into T and has no
// rules beyond its type (the provider's Validate checks the values).
func Typed[T any](name string) SectionDecoder {
	return func(c *Cluster) (any, []FieldError) {
		v, errs := DecodeSection[T](c, name)
		if len(errs) > 0 {
			return nil, errs
		}
		return v, nil
	}
}

// SectionMap returns c's free-form section name as a map (nil when absent or not a mapping), for a
// provider that reads its section field by field (ProviderSpec).
func (c *Cluster) SectionMap(name string) ProviderSpec {
	raw := c.Section(name)
	if raw == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	return m
}

// FreeSection is SectionMap for a decoder: a section that is not a mapping is a problem.
func FreeSection(c *Cluster, name string) (ProviderSpec, []FieldError) {
	raw := c.Section(name)
	if raw == nil {
		return nil, nil
	}
	m := c.SectionMap(name)
	if m == nil {
		return nil, []FieldError{Errorf("spec."+name, "want a mapping, got %s", raw)}
	}
	return m, nil
}

// specFields are the JSON names of Spec's own fields: every other key of a spec is a section.
var specFields = lazy.Value[map[string]bool]{New: func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[Spec]()
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]; tag != "" && tag != "-" {
			m[tag] = true
		}
	}
	return m
}}

// MarshalJSON writes the spec's fields and then its sections as keys of the same object, so a
// record holds `"spec": {"provider": "kind", ..., "kind": {...}}` as users write it.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	b, err := json.Marshal(plain(s))
	if err != nil || len(s.Sections) == 0 {
		return b, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, k := range slices.Sorted(maps.Keys(s.Sections)) {
		if len(s.Sections[k]) == 0 {
			continue
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Quote(k))
		buf.WriteByte(':')
		if err := json.Compact(&buf, s.Sections[k]); err != nil {
			return nil, fmt.Errorf("spec.%s: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the spec's fields and keeps every other key as a section, as it was written.
func (s *Spec) UnmarshalJSON(b []byte) error {
	type plain Spec
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	p.Sections = nil
	for k, v := range all {
		if specFields.Get()[k] || string(v) == "null" {
			continue
		}
		if p.Sections == nil {
			p.Sections = Sections{}
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return fmt.Errorf("spec.%s: %w", k, err)
		}
		p.Sections[k] = c.Bytes()
	}
	*s = Spec(p)
	return nil
}

// MarshalYAML writes the spec as its JSON form does (sections as keys of spec).
func (s Spec) MarshalYAML() (any, error) {
	b, err := s.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	plain(doc.Content[0])
	return doc.Content[0], nil
}

// plain drops the styles a node parsed from JSON has (flow mappings, double-quoted strings), so
// the spec reads as YAML a person writes; the encoder quotes what needs quoting.
func plain(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plain(c)
	}
}

// takeSections removes the keys of the spec mapping of root that are not Spec fields and keeps
// the section of the spec's provider in c, in its JSON form; any other is a problem (another
// provider's section, or an unknown field). What remains is checked against Spec's type.
func (d Decoder) takeSections(c *Cluster, root *yaml.Node) []PositionedError {
	sp := mappingValue(root, "spec")
	if sp == nil {
		return nil
	}
	provider := ""
	if v := mappingValue(sp, "provider"); v != nil && v.Kind == yaml.ScalarNode {
		provider = v.Value
	}
	var errs []PositionedError
	var keep []*yaml.Node
	for i := 0; i+1 < len(sp.Content); i += 2 {
		k, v := sp.Content[i], sp.Content[i+1]
		if specFields.Get()[k.Value] {
			keep = append(keep, k, v)
			continue
		}
		path := "spec." + k.Value
		switch {
		case k.Value != provider && slices.Contains(d.Providers, k.Value):
			errs = append(errs, PositionedError{Line: k.Line, Path: path, Msg: fmt.Sprintf("is for provider %s; this spec's provider is %s", k.Value, provider)})
		case k.Value != provider:
			valid := specFieldNames()
			if len(d.Providers) > 0 {
				valid = append(valid, d.Providers...)
			} else if provider != "" {
				valid = append(valid, provider)
			}
			errs = append(errs, PositionedError{Line: k.Line, Path: path, Msg: fmt.Sprintf("unknown field (valid: %s)", strings.Join(valid, ", "))})
		case c.HasSection(k.Value):
			errs = append(errs, PositionedError{Line: k.Line, Path: path, Msg: "given twice"})
		default:
			raw, err := nodeJSON(v)
			if err != nil {
				errs = append(errs, PositionedError{Line: v.Line, Path: path, Msg: err.Error()})
				continue
			}
			if c.Spec.Sections == nil {
				c.Spec.Sections = Sections{}
			}
			c.Spec.Sections[k.Value] = raw
			c.lines[path] = k.Line
			recordLines(v, path, c.lines)
		}
	}
	sp.Content = keep
	return errs
}

// decodeSection runs the registered decoder of c's provider on its section, making the typed
// section's JSON form the canonical one.
func (d Decoder) decodeSection(c *Cluster) []FieldError {
	dec := d.Sections[c.Spec.Provider]
	if dec == nil || !c.HasSection(c.Spec.Provider) {
		return nil
	}
	v, errs := dec(c)
	if len(errs) > 0 {
		return errs
	}
	if v != nil {
		if err := c.SetSection(c.Spec.Provider, v); err != nil {
			return []FieldError{Errorf("spec."+c.Spec.Provider, "%v", err)}
		}
	}
	return nil
}

func specFieldNames() []string {
	var out []string
	t := reflect.TypeFor[Spec]()
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// recordLines records the line of every path below path in n.
func recordLines(n *yaml.Node, path string, lines map[string]int) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	lines[path] = n.Line
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := yamlerr.Join(path, n.Content[i].Value)
			recordLines(n.Content[i+1], p, lines)
			lines[p] = n.Content[i].Line
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			recordLines(v, path+"["+strconv.Itoa(i)+"]", lines)
		}
	}
}

// nodeJSON is the JSON form of a YAML value, mapping keys in document order.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.Quote(n.Content[i].Value))
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %q has no JSON form", n.Line, n.Value)
		}
		buf.Write(b)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}
