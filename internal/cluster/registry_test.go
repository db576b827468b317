package cluster_test

import (
	"slices"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// TestRegistryVersions: `nuv cluster create --version` takes its default from the first provider,
// in registration order, that lists versions, and names each such provider's versions.
func TestRegistryVersions(t *testing.T) {
	none := func(cluster.Host) (cluster.Provider, error) { return nil, nil }
	for _, tc := range []struct {
		name  string
		regs  []cluster.Registration
		def   string
		valid []string
	}{
		{name: "no provider lists versions", regs: []cluster.Registration{{Name: "a", New: none}}},
		{name: "one provider", regs: []cluster.Registration{{Name: "cloud", New: none},
			{Name: "loop", New: none, Versions: func() []string { return []string{"1.36.3"} }}},
			def: "1.36.3", valid: []string{"loop: 1.36.3"}},
		{name: "two providers, registration order", regs: []cluster.Registration{
			{Name: "zeta", New: none, Versions: func() []string { return []string{"1.35.1", "1.34.2"} }},
			{Name: "alpha", New: none, Versions: func() []string { return []string{"1.36.0"} }},
			{Name: "empty", New: none, Versions: func() []string { return nil }}},
			def: "1.35.1", valid: []string{"zeta: 1.35.1, 1.34.2", "alpha: 1.36.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &cluster.Registry{}
			for _, reg := range tc.regs {
				if err := r.Register(reg); err != nil {
					t.Fatal(err)
				}
			}
			def, valid := r.Versions()
			if def != tc.def || !slices.Equal(valid, tc.valid) {
				t.Errorf("Versions() = %q, %q; want %q, %q", def, valid, tc.def, tc.valid)
			}
		})
	}
}

// TestRegistryVerbs: the providers' own verbs come in registration order, each provider's in its order.
func TestRegistryVerbs(t *testing.T) {
	none := func(cluster.Host) (cluster.Provider, error) { return nil, nil }
	r := &cluster.Registry{}
	for _, reg := range []cluster.Registration{
		{Name: "zeta", New: none, Verbs: []cluster.Verb{{Name: "prepare"}, {Name: "fetch"}}},
		{Name: "cloud", New: none},
		{Name: "alpha", New: none, Verbs: []cluster.Verb{{Name: "node-image"}}},
	} {
		if err := r.Register(reg); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, v := range r.Verbs() {
		got = append(got, v.Name)
	}
	if want := []string{"prepare", "fetch", "node-image"}; !slices.Equal(got, want) {
		t.Errorf("Verbs() = %q, want %q", got, want)
	}
}
