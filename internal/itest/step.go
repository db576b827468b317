package itest

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	yaml3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// StepAPIVersion and StepKind mark a file's options document.
const (
	StepAPIVersion = "itest.nuv.dev/v1"
	StepKind       = "Step"
)

// Options of a step, from its optional Step document.
type Options struct {
	Timeout       string `json:"timeout,omitempty"`
	Script        string `json:"script,omitempty"`
	ExpectFail    bool   `json:"expectFail,omitempty"`
	ErrorContains string `json:"errorContains,omitempty"`
}

// stepDoc is the shape of a Step document (apiVersion, kind, metadata and the options), against
// which unknown fields and wrong types are reported by name and line.
type stepDoc struct {
	APIVersion    string `yaml:"apiVersion"`
	Kind          string `yaml:"kind"`
	Metadata      any    `yaml:"metadata"`
	Timeout       string `yaml:"timeout"`
	Script        string `yaml:"script"`
	ExpectFail    bool   `yaml:"expectFail"`
	ErrorContains string `yaml:"errorContains"`
}

// rootLine is the line of a parsed document's first content (its root's line).
func rootLine(n *yaml3.Node) int {
	if n.Kind == yaml3.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return n.Line
}

// Step is a parsed step file.
type Step struct {
	StepFile
	Options Options
	Timeout time.Duration // 0: the run's default
	Objects []*unstructured.Unstructured
}

var varRef = lazy.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Expand substitutes ${VAR} from lookup; an unset variable is an error naming it.
func Expand(data []byte, lookup func(string) (string, bool)) ([]byte, error) {
	var missing []string
	out := varRef.ReplaceAllFunc(data, func(m []byte) []byte {
		name := string(varRef.FindSubmatch(m)[1])
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
			return m
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("variable %s is not set", missing[0])
	}
	return out, nil
}

// LoadStep reads and parses a step file, substituting variables.
func LoadStep(sf StepFile, lookup func(string) (string, bool)) (*Step, error) {
	raw, err := os.ReadFile(sf.Path)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", sf.Path, err)
	}
	data, err := Expand(raw, lookup)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", sf.Path, err)
	}
	return ParseStep(sf, data)
}

// ParseStep parses a step file's (substituted) content: an optional Step document and the objects.
// Errors start with the file and the line ("tests/itest/x/01-apply.yaml:7: ...").
func ParseStep(sf StepFile, data []byte) (*Step, error) {
	file := sf.Path
	if file == "" {
		file = "step " + sf.Name
	}
	if err := yamlerr.Syntax(file, data); err != nil {
		return nil, err
	}
	st := &Step{StepFile: sf}
	fail := func(format string, a ...any) error { return fmt.Errorf("%s: %s", file, fmt.Sprintf(format, a...)) }
	for i, doc := range yamlerr.Split(data) {
		at := fmt.Sprintf("%s:%d: document %d", file, doc.Line, i+1)
		if len(bytes.TrimSpace(doc.Data)) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(doc.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if t := strings.TrimSpace(string(js)); t == "null" {
			continue
		} else if !strings.HasPrefix(t, "{") {
			return nil, fmt.Errorf("%s: want a Kubernetes object or a Step document (a mapping), got %.40s", at, t)
		}
		u, err := kobj.FromJSON(js)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if u.GetAPIVersion() == StepAPIVersion && u.GetKind() == StepKind {
			var n yaml3.Node
			if err := yaml3.Unmarshal(doc.Data, &n); err != nil {
				return nil, yamlerr.FromDecode(file, data, err)
			}
			if probs := yamlerr.Check(&n, reflect.TypeOf(stepDoc{}), "", nil); len(probs) > 0 {
				for j := range probs {
					probs[j].Line += doc.Line - rootLine(&n)
				}
				return nil, &yamlerr.Errors{File: file, List: probs}
			}
			if err := yaml.Unmarshal(doc.Data, &st.Options); err != nil {
				return nil, fmt.Errorf("%s: Step options: %w", at, err)
			}
			continue
		}
		if u.GetName() == "" && sf.Op != OpAssert && sf.Op != OpError && sf.Op != OpDelete {
			return nil, fmt.Errorf("%s (%s): metadata.name is required", at, u.GetKind())
		}
		if u.GetName() == "" && len(u.GetLabels()) == 0 {
			return nil, fmt.Errorf("%s (%s): give metadata.name or metadata.labels", at, u.GetKind())
		}
		st.Objects = append(st.Objects, u)
	}
	if st.Options.Timeout != "" {
		d, err := time.ParseDuration(st.Options.Timeout)
		if err != nil || d <= 0 {
			return nil, fail("timeout %q: want a positive duration such as 30s", st.Options.Timeout)
		}
		st.Timeout = d
	}
	switch {
	case sf.Op == OpCommand && st.Options.Script == "":
		return nil, fail("a command step needs a Step document with a script")
	case sf.Op != OpCommand && st.Options.Script != "":
		return nil, fail("script is only for command steps (name the file NN-command-....yaml)")
	case sf.Op != OpCommand && len(st.Objects) == 0:
		return nil, fail("a %s step needs at least one object", sf.Op)
	}
	return st, nil
}
