package awsnet

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// TF writes resources as Terraform blocks of the hashicorp/aws provider: the network kinds'
// Terraform forms are its methods, and a provider's own writer embeds it for its kinds.
type TF struct {
	// C is the cluster's spec.
	C *spec.Cluster
	// Body is main.tf's body.
	Body *hclwrite.Body
	// Addr maps each resource key written to its Terraform address (type.name).
	Addr map[string]string
	// ByKey are the desired resources by key.
	ByKey map[string]cluster.Resource
}

// NewTF is a writer of c's resources into body.
func NewTF(c *spec.Cluster, body *hclwrite.Body) *TF {
	return &TF{C: c, Body: body, Addr: map[string]string{}, ByKey: map[string]cluster.Resource{}}
}

// Block appends the resource block of type typ for resource key, named after the key's name.
func (w *TF) Block(typ, key string) *hclwrite.Body {
	_, name, _ := strings.Cut(key, "/")
	label := tfgen.Name(name)
	w.Body.AppendNewline()
	w.Addr[key] = typ + "." + label
	return w.Body.AppendNewBlock("resource", []string{typ, label}).Body()
}

// Ref is a reference to attr of the block made for resource key.
func (w *TF) Ref(key, attr string) (hclwrite.Tokens, error) {
	a, ok := w.Addr[key]
	if !ok {
		return nil, fmt.Errorf("terraform: %s refers to %s, which comes later or does not exist", key, key)
	}
	typ, name, _ := strings.Cut(a, ".")
	return tfgen.Ref(typ, name, attr), nil
}

// Refs is a list of references to attr of the blocks made for keys.
func (w *TF) Refs(attr string, keys ...string) (hclwrite.Tokens, error) {
	var items []hclwrite.Tokens
	for _, k := range keys {
		t, err := w.Ref(k, attr)
		if err != nil {
			return nil, err
		}
		items = append(items, t)
	}
	return tfgen.List(items...), nil
}

// Addrs is a list of the addresses of the blocks made for keys (for depends_on), skipping keys
// with none.
func (w *TF) Addrs(keys ...string) hclwrite.Tokens {
	var items []hclwrite.Tokens
	for _, k := range keys {
		if a, ok := w.Addr[k]; ok {
			typ, name, _ := strings.Cut(a, ".")
			items = append(items, tfgen.Ref(typ, name))
		}
	}
	return tfgen.List(items...)
}

// NameTags are a resource's tags besides the provider's default ones: its Name, TagResource and
// the extra keys and values.
func (w *TF) NameTags(r cluster.Resource, extra ...string) cty.Value {
	t := map[string]string{"Name": NameTag(w.C.Metadata.Name, r), TagResource: r.Key()}
	for i := 0; i+1 < len(extra); i += 2 {
		t[extra[i]] = extra[i+1]
	}
	return tfgen.StringMap(t)
}
