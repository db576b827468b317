// Package tfgen helps providers write Terraform modules (cluster.TerraformWriter) with hclwrite:
// the variables every nuv module takes (region, tags), references between resources, and an atomic
// writer for the module directory. Providers build the resources; tfgen keeps the files uniform.
package tfgen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/zclconf/go-cty/cty"
)

// Header opens every file nuv writes, so nobody edits a generated file by hand unknowingly.
const Header = "# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.\n\n"

// Module is a Terraform module being written: files by name.
type Module struct {
	files map[string]*hclwrite.File
}

// NewModule returns an empty module.
func NewModule() *Module { return &Module{files: map[string]*hclwrite.File{}} }

// File returns the file called name (created empty on first use).
func (m *Module) File(name string) *hclwrite.Body {
	f, ok := m.files[name]
	if !ok {
		f = hclwrite.NewEmptyFile()
		m.files[name] = f
	}
	return f.Body()
}

// Bytes renders every file, formatted, with the header.
func (m *Module) Bytes() map[string][]byte {
	out := make(map[string][]byte, len(m.files))
	for n, f := range m.files {
		out[n] = append([]byte(Header), hclwrite.Format(f.Bytes())...)
	}
	return out
}

// Variables writes variables.tf: region (defaulting to the spec's) and tags (defaulting to the
// spec's tags plus nuv's ownership tag), the inputs every nuv module takes.
func (m *Module) Variables(region string, tags map[string]string) {
	b := m.File("variables.tf")
	v := b.AppendNewBlock("variable", []string{"region"}).Body()
	v.SetAttributeRaw("type", Ident("string"))
	v.SetAttributeValue("description", cty.StringVal("Region the cluster's resources are created in."))
	v.SetAttributeValue("default", cty.StringVal(region))
	b.AppendNewline()
	v = b.AppendNewBlock("variable", []string{"tags"}).Body()
	v.SetAttributeRaw("type", Ident("map(string)"))
	v.SetAttributeValue("description", cty.StringVal("Tags put on every resource (nuv.dev/cluster marks what nuv owns)."))
	v.SetAttributeValue("default", StringMap(tags))
}

// Ident is a raw expression (a type, a function call, a reference) written as is.
func Ident(expr string) hclwrite.Tokens {
	return hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(expr)}}
}

// Ref is a reference to another block's attribute: Ref("aws_vpc", "main", "id") is aws_vpc.main.id.
func Ref(parts ...string) hclwrite.Tokens {
	trav := hcl.Traversal{hcl.TraverseRoot{Name: parts[0]}}
	for _, p := range parts[1:] {
		trav = append(trav, hcl.TraverseAttr{Name: p})
	}
	return hclwrite.TokensForTraversal(trav)
}

// TemplateEscape quotes literal text for an HCL template (a quoted string or a heredoc): the
// sequences that would start an interpolation or a directive are doubled.
func TemplateEscape(s string) string {
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(s)
}

// Heredoc is a heredoc template holding text as it is (its literal parts already quoted with
// TemplateEscape, its interpolations written by the caller): for scripts such as user data. text
// ends with a newline; no line of it may be the delimiter, EOT.
func Heredoc(text string) hclwrite.Tokens {
	return hclwrite.Tokens{
		{Type: hclsyntax.TokenOHeredoc, Bytes: []byte("<<EOT\n")},
		{Type: hclsyntax.TokenStringLit, Bytes: []byte(text)},
		{Type: hclsyntax.TokenCHeredoc, Bytes: []byte("EOT")},
	}
}

// List is a list of raw expressions: List(Ref(...), Ref(...)).
func List(items ...hclwrite.Tokens) hclwrite.Tokens {
	return hclwrite.TokensForTuple(items)
}

// StringMap is a map(string) value with sorted keys.
func StringMap(m map[string]string) cty.Value {
	if len(m) == 0 {
		return cty.MapValEmpty(cty.String)
	}
	vals := make(map[string]cty.Value, len(m))
	for k, v := range m {
		vals[k] = cty.StringVal(v)
	}
	return cty.MapVal(vals)
}

// Strings is a list(string) value.
func Strings(ss ...string) cty.Value {
	if len(ss) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(ss))
	for i, s := range ss {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}

// Name turns a nuv resource name ("node-group/workers", "subnet/private-a") into a Terraform
// block label: letters, digits, underscores and dashes, starting with a letter or underscore.
func Name(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || (out[0] >= '0' && out[0] <= '9') || out[0] == '-' {
		out = "_" + out
	}
	return out
}

// Check parses every .tf file as HCL and returns the diagnostics, naming the file and line (a
// module's other files, such as the spec kept beside it, are not HCL).
func Check(files map[string][]byte) error {
	var msgs []string
	for _, n := range sortedNames(files) {
		if !strings.HasSuffix(n, ".tf") {
			continue
		}
		if _, diags := hclsyntax.ParseConfig(files[n], n, hcl.InitialPos); diags.HasErrors() {
			msgs = append(msgs, diags.Error())
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("terraform module does not parse: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// Write puts the files into dir (created if missing), each atomically, and returns their paths. A
// file that does not parse is a bug in a provider, refused before anything is written. Files in dir
// that nuv did not write are left alone; a stale .tf file that nuv wrote earlier is removed, so the
// directory is the module of this spec only.
func Write(dir string, files map[string][]byte) ([]string, error) {
	if err := Check(files); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("terraform output: %w", err)
	}
	var paths []string
	for _, n := range sortedNames(files) {
		p := filepath.Join(dir, n)
		if err := fsutil.WriteFileAtomic(p, files[n], 0o644); err != nil {
			return nil, fmt.Errorf("terraform output: %w", err)
		}
		paths = append(paths, p)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, p := range old {
		if _, ours := files[filepath.Base(p)]; ours {
			continue
		}
		if data, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(data), Header) {
			if err := os.Remove(p); err != nil {
				return nil, fmt.Errorf("terraform output: remove stale %s: %w", p, err)
			}
		}
	}
	return paths, nil
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
