package cluster

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/spf13/pflag"
)

// Registration is one provider as nuv's commands know it: what builds it, what its spec section
// is, what `nuv cluster create NAME` means for it. Commands, completion, spec decoding and the
// documentation ask a Registry of these, so no generic package names a provider.
type Registration struct {
	// Name is the provider's name: spec.provider, the key of its section (spec.<name>) and the
	// argument of `nuv cluster create`.
	Name string
	// Short describes the provider in one line.
	Short string
	// New builds the provider for a command running on host.
	New func(h Host) (Provider, error)
	// Section decodes and checks the provider's spec section strictly (nil: the provider has
	// none, and a spec of it may not hold one). spec.Typed makes one from the section's Go type.
	Section spec.SectionDecoder
	// Shorthand builds the spec `nuv cluster create NAME` stands for; nil makes the plain one
	// (DefaultShorthand).
	Shorthand func(o CreateOptions) (*spec.Cluster, error)
	// Versions lists the Kubernetes versions the provider makes, its default first; nil: the
	// versions its service offers (asked when a cluster is made). `nuv cluster create -h` shows them.
	Versions func() []string
	// Verbs are the `nuv cluster` subcommands the provider brings for its own machinery (local's
	// binaries: prepare; kind's node images: node-image), listed after the common verbs in
	// registration order. They read the environment only, never the state store.
	Verbs []Verb
	// Cloud says the provider's clusters are cloud resources: deleting one is never undone by a
	// quick create, so `nuv cluster delete` asks for consent even when it is named.
	Cloud bool
}

// Verb is a `nuv cluster` subcommand a provider brings.
type Verb struct {
	Name string
	// Usage is the usage line after "nuv cluster " ("prepare [--offline]"); Short its one line of help.
	Usage, Short string
	// Run runs `nuv cluster NAME ARGS` in env; v is the verb itself (its FlagSet and Parse).
	Run func(ctx context.Context, v Verb, env *cli.Env, args []string) error
}

// FlagSet is a fresh flag set of the verb, for Parse.
func (v Verb) FlagSet() *pflag.FlagSet { return cli.NewFlagSet("nuv cluster " + v.Name) }

// Parse parses the verb's args the one way nuv's commands do (cli.Parse): -h prints the help to
// env's stdout and returns a clean exit (cli.ExitOK); a bad flag is a usage error quoting the usage line.
func (v Verb) Parse(env *cli.Env, fs *pflag.FlagSet, args []string) error {
	done, err := cli.Parse(env, fs, cli.Usage{Line: "nuv cluster " + v.Usage, Short: v.Short}, args)
	if done {
		return cli.Exit(cli.ExitOK, nil)
	}
	return err
}

// Host is what a provider is built from: the command's environment and nuv's folders.
type Host struct {
	Env *cli.Env
	// Home is nuv's home ($NUV_HOME), Project the project root (clusters/ lives there).
	Home, Project string
}

// CreateOptions are the flags of `nuv cluster create PROVIDER [NAME]`.
type CreateOptions struct {
	Name string
	// Version is --version; "" when not given (the provider's default).
	Version string
	Nodes   int
	HA      bool
	// Flavor, PortBase and Durability are options of local clusters; a provider that has no use
	// for one refuses it (RefuseLocalOptions).
	Flavor     string
	PortBase   int
	Durability string
}

// DefaultShorthand is the spec `nuv cluster create` makes for a provider without a Shorthand:
// one node group "default" of o.Nodes nodes, three control-plane nodes with --ha.
func DefaultShorthand(provider string, o CreateOptions) (*spec.Cluster, error) {
	if err := RefuseLocalOptions(provider, o); err != nil {
		return nil, err
	}
	return BaseShorthand(provider, o), nil
}

// BaseShorthand is the plain spec of DefaultShorthand, for a provider's Shorthand to adjust.
func BaseShorthand(provider string, o CreateOptions) *spec.Cluster {
	nodes := o.Nodes
	s := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: o.Name},
		Source: "nuv cluster create",
		Spec: spec.Spec{Provider: provider, KubernetesVersion: o.Version,
			NodeGroups: []spec.NodeGroup{{Name: spec.DefaultNodeGroup, Count: &nodes}}}}
	if o.HA {
		s.Spec.ControlPlane.Count = 3
	}
	return s
}

// RefuseLocalOptions is the usage error of local-only flags given for another provider.
func RefuseLocalOptions(provider string, o CreateOptions) error {
	switch {
	case o.Durability != "":
		return cli.Usagef("nuv cluster create: --durability %q: local clusters only, fast or safe", o.Durability)
	case o.Flavor != "" || o.PortBase != 0:
		return cli.Usagef("nuv cluster create %s: --flavor and --port-base are for local clusters", provider)
	}
	return nil
}

// Registry is the set of providers nuv knows. The zero value is empty; Register adds to it.
type Registry struct {
	regs []Registration
}

// Register adds a provider; a name registered twice, an empty name or one without a factory is
// an error.
func (r *Registry) Register(reg Registration) error {
	switch {
	case reg.Name == "":
		return fmt.Errorf("provider registration without a name")
	case spec.ValidName(reg.Name) != nil:
		return fmt.Errorf("provider %q: a provider name is a lower-case DNS label", reg.Name)
	case reg.New == nil:
		return fmt.Errorf("provider %s: registration without a factory (New)", reg.Name)
	}
	if _, ok := r.Get(reg.Name); ok {
		return fmt.Errorf("provider %s is registered twice", reg.Name)
	}
	r.regs = append(r.regs, reg)
	return nil
}

// Get returns the registration of name.
func (r *Registry) Get(name string) (Registration, bool) {
	for _, reg := range r.regs {
		if reg.Name == name {
			return reg, true
		}
	}
	return Registration{}, false
}

// Names lists the registered providers, sorted.
func (r *Registry) Names() []string {
	var out []string
	for _, reg := range r.regs {
		out = append(out, reg.Name)
	}
	sort.Strings(out)
	return out
}

// All returns the registrations, sorted by name.
func (r *Registry) All() []Registration {
	out := slices.Clone(r.regs)
	slices.SortFunc(out, func(a, b Registration) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Decoder is the spec decoder that knows the registered providers and their sections.
func (r *Registry) Decoder() spec.Decoder {
	d := spec.Decoder{Sections: map[string]spec.SectionDecoder{}}
	for _, reg := range r.regs { // in registration order, as messages list them
		d.Providers = append(d.Providers, reg.Name)
		if reg.Section != nil {
			d.Sections[reg.Name] = reg.Section
		}
	}
	return d
}

// Versions is what `nuv cluster create --version` says: its default, the default of the first
// provider (in registration order) that lists its versions, and each such provider's versions
// ("local: 1.36.3"), in that order.
func (r *Registry) Versions() (def string, valid []string) {
	for _, reg := range r.regs {
		if reg.Versions == nil {
			continue
		}
		vs := reg.Versions()
		if len(vs) == 0 {
			continue
		}
		if def == "" {
			def = vs[0]
		}
		valid = append(valid, reg.Name+": "+strings.Join(vs, ", "))
	}
	return def, valid
}

// Verbs are the providers' own `nuv cluster` subcommands, in registration order.
func (r *Registry) Verbs() []Verb {
	var out []Verb
	for _, reg := range r.regs {
		out = append(out, reg.Verbs...)
	}
	return out
}

// Providers builds every registered provider for host, by name.
func (r *Registry) Providers(h Host) (map[string]Provider, error) {
	out := make(map[string]Provider, len(r.regs))
	for _, reg := range r.regs {
		p, err := reg.New(h)
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", reg.Name, err)
		}
		out[reg.Name] = p
	}
	return out, nil
}

// Shorthand is the spec `nuv cluster create provider` stands for with options o.
func (r *Registry) Shorthand(provider string, o CreateOptions) (*spec.Cluster, error) {
	reg, ok := r.Get(provider)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", provider)
	}
	if reg.Shorthand != nil {
		return reg.Shorthand(o)
	}
	return DefaultShorthand(provider, o)
}
