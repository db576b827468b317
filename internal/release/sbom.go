package release

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// The SBOM is CycloneDX 1.5 JSON: the archive is the BOM's subject (metadata.component, with its
// SHA-256), each program a component of type application (its SHA-256, Go version and build
// settings as properties), each Go module a program links a library component named by its
// module path, with its version, its package URL and its go.sum hash (h1:, a property: CycloneDX
// has no algorithm for Go's directory hash). dependencies say which program links which module.
// The only time is the release's epoch; the serial number derives from the archive's hash.

type bom struct {
	BOMFormat    string       `json:"bomFormat"`
	SpecVersion  string       `json:"specVersion"`
	SerialNumber string       `json:"serialNumber"`
	Version      int          `json:"version"`
	Metadata     bomMetadata  `json:"metadata"`
	Components   []component  `json:"components"`
	Dependencies []dependency `json:"dependencies"`
}

type bomMetadata struct {
	Timestamp string    `json:"timestamp"`
	Tools     bomTools  `json:"tools"`
	Component component `json:"component"`
}

type bomTools struct {
	Components []component `json:"components"`
}

type component struct {
	BOMRef     string     `json:"bom-ref,omitempty"`
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

// Property names of the SBOM.
const (
	PropModuleSum    = "nuv:go:module:sum"
	PropModuleOrigin = "nuv:go:module:replaces"
	PropGoVersion    = "nuv:go:version"
	PropBuild        = "nuv:go:build:"
)

// Module is one Go module a program links, as its build information records it (after
// replacement).
type Module struct {
	Path, Version, Sum string
	// Replaces is the module path@version this one stands in for ("" if none).
	Replaces string
}

// PURL is the module's package URL.
func (m Module) PURL() string {
	return "pkg:golang/" + m.Path + "@" + strings.ReplaceAll(m.Version, "+", "%2B")
}

// Modules lists the dependency modules of a build, sorted by path.
func Modules(info *debug.BuildInfo) []Module {
	var out []Module
	for _, d := range info.Deps {
		m := Module{Path: d.Path, Version: d.Version, Sum: d.Sum}
		if r := d.Replace; r != nil {
			m = Module{Path: r.Path, Version: r.Version, Sum: r.Sum, Replaces: d.Path + "@" + d.Version}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// SBOM returns the CycloneDX JSON of the archive named archive (SHA-256 archiveSum) that holds
// bins, built from the module lists the Go toolchain recorded in them.
func SBOM(archive, archiveSum string, s Stamp, bins []Binary) ([]byte, error) {
	serial := sha256.Sum256([]byte("nuv SBOM\n" + archive + "\n" + archiveSum))
	serial[6] = serial[6]&0x0f | 0x50 // a name-based UUID (RFC 4122 version 5 layout)
	serial[8] = serial[8]&0x3f | 0x80
	u := hex.EncodeToString(serial[:16])
	doc := bom{
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: "urn:uuid:" + u[0:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:32],
		Version:      1,
		Metadata: bomMetadata{
			Timestamp: time.Unix(s.Epoch, 0).UTC().Format(time.RFC3339),
			Tools:     bomTools{Components: []component{{Type: "application", Name: "nuv-release", Version: s.Version}}},
			Component: component{
				BOMRef: "archive", Type: "file", Name: archive, Version: s.Version,
				Hashes:     []hash{{"SHA-256", archiveSum}},
				Properties: []property{{"nuv:commit", s.Commit}},
			},
		},
	}
	libs := map[string]component{}
	archiveDeps := dependency{Ref: "archive"}
	sorted := append([]Binary(nil), bins...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, b := range sorted {
		info, err := buildinfo.ReadFile(b.Path)
		if err != nil {
			return nil, fmt.Errorf("release: SBOM of %s: %w", b.Path, err)
		}
		sum, err := fsutil.SHA256File(b.Path)
		if err != nil {
			return nil, err
		}
		ref := "program:" + b.Name
		props := []property{{PropGoVersion, info.GoVersion}, {"nuv:go:main", info.Main.Path + "@" + info.Main.Version}}
		for _, st := range info.Settings {
			if st.Key == "DefaultGODEBUG" {
				continue
			}
			props = append(props, property{PropBuild + st.Key, st.Value})
		}
		doc.Components = append(doc.Components, component{
			BOMRef: ref, Type: "application", Name: b.Name, Version: s.Version,
			Hashes: []hash{{"SHA-256", sum}}, Properties: props,
		})
		archiveDeps.DependsOn = append(archiveDeps.DependsOn, ref)
		dep := dependency{Ref: ref, DependsOn: []string{}}
		for _, m := range Modules(info) {
			purl := m.PURL()
			c := component{BOMRef: purl, Type: "library", Name: m.Path, Version: m.Version, PURL: purl}
			if m.Sum != "" {
				c.Properties = append(c.Properties, property{PropModuleSum, m.Sum})
			}
			if m.Replaces != "" {
				c.Properties = append(c.Properties, property{PropModuleOrigin, m.Replaces})
			}
			libs[purl] = c
			dep.DependsOn = append(dep.DependsOn, purl)
		}
		doc.Dependencies = append(doc.Dependencies, dep)
	}
	doc.Dependencies = append([]dependency{archiveDeps}, doc.Dependencies...)
	refs := make([]string, 0, len(libs))
	for r := range libs {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	for _, r := range refs {
		doc.Components = append(doc.Components, libs[r])
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
