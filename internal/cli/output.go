package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Output formats, kubectl's spelling (-o table|wide|json|yaml).
const (
	FormatTable = "table"
	FormatWide  = "wide"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// ListFormats are the formats of every command that lists or shows things.
var ListFormats = []string{FormatTable, FormatWide, FormatJSON, FormatYAML}

// OutputOption is the one spelling of machine output: -o/--output FORMAT among the formats a
// command offers (the first is the default; a bad one is a usage error naming the accepted ones).
// The older --json spelling still works, as a deprecated alias that prints one warning line.
type OutputOption struct {
	Format string
	json   bool
}

// AddFlags defines -o/--output and the deprecated --json; formats are the accepted values, the
// first the default (nil: ListFormats).
func (o *OutputOption) AddFlags(fs *pflag.FlagSet, formats ...string) {
	if len(formats) == 0 {
		formats = ListFormats
	}
	EnumVarP(fs, &o.Format, "output", "o", formats[0], formats, "output format: "+strings.Join(formats, ", "))
	if fs.Lookup("json") == nil && contains(formats, FormatJSON) {
		fs.BoolVar(&o.json, "json", false, "print JSON")
		_ = fs.MarkDeprecated("json", "use -o json")
	}
}

// Alias defines name (e.g. --format) as a deprecated spelling of -o, for a command that had it.
func (o *OutputOption) Alias(fs *pflag.FlagSet, name string) {
	f := fs.Lookup("output")
	fs.AddFlag(&pflag.Flag{Name: name, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue})
	_ = fs.MarkDeprecated(name, "use -o")
}

// Validate resolves --json. (Bad values are refused while parsing; u is kept for the callers.)
func (o *OutputOption) Validate(Usage) error {
	if o.json {
		o.Format = FormatJSON
	}
	return nil
}

// Machine tells whether the format is json or yaml.
func (o *OutputOption) Machine() bool { return o.Format == FormatJSON || o.Format == FormatYAML }

// Wide tells whether the table should show its extra columns.
func (o *OutputOption) Wide() bool { return o.Format == FormatWide }

// Write prints v as JSON (indented) or YAML, by the format; for table and wide it does nothing and
// reports false, so the caller prints its table.
func (o *OutputOption) Write(w io.Writer, v any) (bool, error) {
	switch o.Format {
	case FormatJSON:
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return true, fmt.Errorf("encode JSON: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return true, err
	case FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return true, fmt.Errorf("encode YAML: %w", err)
		}
		_, err = w.Write(b)
		return true, err
	}
	return false, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
