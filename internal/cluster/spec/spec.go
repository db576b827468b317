// Package spec is nuv's declarative cluster specification: YAML documents of
// `apiVersion: nuv.dev/v1alpha1`, `kind: Cluster` that say what a cluster should be (provider, version,
// control plane, node groups, networks, registry wiring, a provider-specific section), strictly
// decoded so that every unknown field, wrong type or invalid value is reported with the file, the
// line and the field path.
//
// A file may hold several documents; by convention specs live in clusters/specs/. The lifecycle
// engine (package engine) turns a spec into a plan and applies it through a provider.
package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// APIVersion and Kind identify a cluster spec document.
const (
	APIVersion = "nuv.dev/v1alpha1"
	Kind       = "Cluster"
)

// Cluster is one cluster spec document.
type Cluster struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion"`
	Kind       string   `yaml:"kind" json:"kind"`
	Metadata   Metadata `yaml:"metadata" json:"metadata"`
	Spec       Spec     `yaml:"spec" json:"spec"`

	// Source is where the document came from ("file.yaml:12"); set by the decoder, not part of the
	// document.
	Source string `yaml:"-" json:"-"`
	// Marks are what the engine has providers tag the cluster's cloud resources with besides its
	// name (its expiry and owner, from the state record); not part of the document.
	Marks Marks `yaml:"-" json:"-"`
	lines map[string]int
}

// Metadata names a cluster.
type Metadata struct {
	Name   string            `yaml:"name" json:"name"`
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
}

// Spec is what the cluster should be.
type Spec struct {
	// Provider names the provider that makes the cluster ("local", "kind", "eks", ...).
	Provider string `yaml:"provider" json:"provider"`
	// Region and Zones place a cloud cluster.
	Region string   `yaml:"region,omitempty" json:"region,omitempty"`
	Zones  []string `yaml:"zones,omitempty" json:"zones,omitempty"`
	// TTL, if set, is how long the cluster may live ("4h", "2d"; see ParseTTL): the state record
	// gets an expiry and `nuv cluster gc` deletes the cluster once it passed.
	TTL string `yaml:"ttl,omitempty" json:"ttl,omitempty"`
	// KubernetesVersion is "MAJOR.MINOR" or "MAJOR.MINOR.PATCH" (a leading v is accepted).
	KubernetesVersion string       `yaml:"kubernetesVersion,omitempty" json:"kubernetesVersion,omitempty"`
	ControlPlane      ControlPlane `yaml:"controlPlane,omitempty" json:"controlPlane,omitempty"`
	NodeGroups        []NodeGroup  `yaml:"nodeGroups,omitempty" json:"nodeGroups,omitempty"`
	Networking        Networking   `yaml:"networking,omitempty" json:"networking,omitempty"`
	Registry          bool         `yaml:"registry,omitempty" json:"registry,omitempty"`
	// Addons are installed (nuv addons) once the cluster is up; apply keeps them converged.
	Addons *AddonsSpec `yaml:"addons,omitempty" json:"addons,omitempty"`
	Tags   Tags        `yaml:"tags,omitempty" json:"tags,omitempty"`
	// Sections hold the provider's own section, `spec.<provider>:` (see Sections); written and
	// read as keys of spec.
	Sections Sections `yaml:"-" json:"-"`
}

// AddonsSpec selects add-ons of an add-ons index (internal/addons) for a cluster.
type AddonsSpec struct {
	// Index is the add-ons index file, relative to the project (default addons/index.yaml).
	Index string `yaml:"index,omitempty" json:"index,omitempty"`
	// Only and Stacks select add-ons (dependencies come along); neither: the index's own list.
	Only   []string `yaml:"only,omitempty" json:"only,omitempty"`
	Stacks []string `yaml:"stacks,omitempty" json:"stacks,omitempty"`
}

// Tags are key/value tags put on every cloud resource of the cluster (besides nuv.dev/cluster).
type Tags map[string]string

// ControlPlane sizes the control plane: Count > 1 is a highly available one.
type ControlPlane struct {
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
}

// DefaultNodeGroup names the one node group of the spec `nuv cluster create NAME` and `nuv up`
// make.
const DefaultNodeGroup = "default"

// NodeGroup is a set of identical nodes.
type NodeGroup struct {
	Name         string            `yaml:"name" json:"name"`
	Count        *int              `yaml:"count,omitempty" json:"count,omitempty"`
	Min          *int              `yaml:"min,omitempty" json:"min,omitempty"`
	Max          *int              `yaml:"max,omitempty" json:"max,omitempty"`
	InstanceType string            `yaml:"instanceType,omitempty" json:"instanceType,omitempty"`
	Labels       map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Taints       []string          `yaml:"taints,omitempty" json:"taints,omitempty"`
	Spot         bool              `yaml:"spot,omitempty" json:"spot,omitempty"`
	// Manager is "" or "managed" (the provider's own node groups) or "karpenter".
	Manager string `yaml:"manager,omitempty" json:"manager,omitempty"`
	// DiskSize is the node disk in GiB (cloud providers).
	DiskSize int `yaml:"diskSize,omitempty" json:"diskSize,omitempty"`
}

// Size is the node group's desired node count: Count, else Min, else 1.
func (g NodeGroup) Size() int {
	switch {
	case g.Count != nil:
		return *g.Count
	case g.Min != nil:
		return *g.Min
	}
	return 1
}

// Networking holds the cluster's networks.
type Networking struct {
	PodCIDR     string `yaml:"podCIDR,omitempty" json:"podCIDR,omitempty"`
	ServiceCIDR string `yaml:"serviceCIDR,omitempty" json:"serviceCIDR,omitempty"`
	// VPCCIDR is a cloud cluster's network (providers with VPCs).
	VPCCIDR string `yaml:"vpcCIDR,omitempty" json:"vpcCIDR,omitempty"`
}

// ProviderSpec is the free-form section of a provider whose typed section has not been defined yet;
// its provider validates it.
type ProviderSpec map[string]any

// Taint is a parsed `key[=value]:Effect` entry of NodeGroup.Taints.
type Taint struct{ Key, Value, Effect string }

// ParseTaint parses `key[=value]:Effect` with Effect one of NoSchedule, PreferNoSchedule, NoExecute.
func ParseTaint(s string) (Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return Taint{}, fmt.Errorf("taint %q: want key[=value]:Effect", s)
	}
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return Taint{}, fmt.Errorf("taint %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", s, effect)
	}
	k, v, _ := strings.Cut(kv, "=")
	if k == "" {
		return Taint{}, fmt.Errorf("taint %q: empty key", s)
	}
	return Taint{Key: k, Value: v, Effect: effect}, nil
}

// Line returns the line of the field at path ("spec.nodeGroups[1].count") in the document the
// spec was decoded from, or the nearest enclosing field's; 0 if unknown.
func (c *Cluster) Line(path string) int {
	for p := path; p != ""; p = parent(p) {
		if l, ok := c.lines[p]; ok {
			return l
		}
	}
	return c.lines[""]
}

func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// FieldError is an invalid value at a field path.
type FieldError struct {
	Path string
	Msg  string
}

func (e FieldError) Error() string { return e.Path + ": " + e.Msg }

// Errorf builds a FieldError.
func Errorf(path, format string, a ...any) FieldError {
	return FieldError{Path: path, Msg: fmt.Sprintf(format, a...)}
}

// Errors are the problems found in one document, each with file, line and field path.
type Errors = yamlerr.Errors

// PositionedError is one problem at a line.
type PositionedError = yamlerr.Problem

// Positioned attaches lines to field errors of c.
func (c *Cluster) Positioned(file string, errs []FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	out := &Errors{File: file}
	for _, e := range errs {
		out.List = append(out.List, PositionedError{Line: c.Line(e.Path), Path: e.Path, Msg: e.Msg})
	}
	return out
}

// Clone returns a deep copy.
func (c *Cluster) Clone() *Cluster {
	out := *c
	out.Metadata.Labels = maps.Clone(c.Metadata.Labels)
	out.Spec.Zones = slices.Clone(c.Spec.Zones)
	out.Spec.Tags = maps.Clone(c.Spec.Tags)
	out.Spec.NodeGroups = nil
	for _, g := range c.Spec.NodeGroups {
		g.Labels = maps.Clone(g.Labels)
		g.Taints = slices.Clone(g.Taints)
		out.Spec.NodeGroups = append(out.Spec.NodeGroups, g)
	}
	if c.Spec.Addons != nil {
		a := *c.Spec.Addons
		a.Only, a.Stacks = slices.Clone(a.Only), slices.Clone(a.Stacks)
		out.Spec.Addons = &a
	}
	if c.Spec.Sections != nil {
		out.Spec.Sections = Sections{}
		for k, v := range c.Spec.Sections {
			out.Spec.Sections[k] = slices.Clone(v)
		}
	}
	out.lines = c.lines
	return &out
}
