package itest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
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

// Step is a parsed step file.
type Step struct {
	StepFile
	Options Options
	Timeout time.Duration // 0: the run's default
	Objects []*unstructured.Unstructured
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

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
	st, err := ParseStep(sf, data)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", sf.Path, err)
	}
	return st, nil
}

// ParseStep parses a step file's (substituted) content: an optional Step document and the objects.
func ParseStep(sf StepFile, data []byte) (*Step, error) {
	st := &Step{StepFile: sf}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if string(js) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if u.GetAPIVersion() == StepAPIVersion && u.GetKind() == StepKind {
			if err := yaml.Unmarshal(doc, &st.Options); err != nil {
				return nil, fmt.Errorf("Step options: %w", err)
			}
			continue
		}
		if u.GetName() == "" && sf.Op != OpAssert && sf.Op != OpError && sf.Op != OpDelete {
			return nil, fmt.Errorf("document %d (%s): metadata.name is required", i, u.GetKind())
		}
		if u.GetName() == "" && len(u.GetLabels()) == 0 {
			return nil, fmt.Errorf("document %d (%s): give metadata.name or metadata.labels", i, u.GetKind())
		}
		st.Objects = append(st.Objects, u)
	}
	if st.Options.Timeout != "" {
		d, err := time.ParseDuration(st.Options.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout %q: want a positive duration such as 30s", st.Options.Timeout)
		}
		st.Timeout = d
	}
	switch {
	case sf.Op == OpCommand && st.Options.Script == "":
		return nil, fmt.Errorf("a command step needs a Step document with a script")
	case sf.Op != OpCommand && st.Options.Script != "":
		return nil, fmt.Errorf("script is only for command steps (name the file NN-command-....yaml)")
	case sf.Op != OpCommand && len(st.Objects) == 0:
		return nil, fmt.Errorf("a %s step needs at least one object", sf.Op)
	}
	return st, nil
}
