// Package bundle finds and walks nuv's task bundle: a tree of folders, each with a nuvfile.yml
// (a Taskfile), an optional docopt usage (nuvopts.txt or docopts.md), an optional .env and, at the
// root, nuvroot.json (the bundle's version and `config` defaults). The layout is the one of published
// nuv bundles (olaris), so they run unchanged.
//
// `nuv a b c ARGS` descends folders a/b and runs task c of b's nuvfile; every word may be an exact
// name or a unique prefix of a folder or task. Plugins (~/.nuv/olaris-<name>) add their top-level
// folders as commands. Running tasks is delegated to a Runner, so this package does not depend on
// the interpreter.
package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/config"
)

// File names of the bundle format.
const (
	NuvfileName = "nuvfile.yml"
	NuvrootName = "nuvroot.json"
	OptsName    = "nuvopts.txt"
	DocoptsName = "docopts.md"
	PrereqName  = "prereq.yml"
	// LockName is the file beside a downloaded bundle that records where it came from and, when
	// pinned, the tag or commit `nuv -update` must fetch.
	LockName = "olaris.lock"
)

// Source tells where a bundle root was found.
type Source string

// The discovery order, first match wins.
const (
	FromEnv      Source = "NUV_ROOT"
	FromParent   Source = "parent directory"
	FromLocal    Source = "./olaris"
	FromHome     Source = "downloaded"
	FromEmbedded Source = "embedded in the binary"
	FromPlugin   Source = "plugin"
)

// Root is one bundle: its directory and the contents of its nuvroot.json.
type Root struct {
	Dir    string
	Source Source
	// Name is the plugin name (olaris-<name>) for plugins, empty for the main bundle.
	Name    string
	Version string
	// Config holds nuvroot.json's `config` defaults.
	Config map[string]any
}

// LoadRoot reads dir/nuvroot.json when present (a missing file gives an empty version and config).
// Malformed JSON is an error with the file, line and column.
func LoadRoot(dir string, src Source) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	r := &Root{Dir: abs, Source: src, Config: map[string]any{}}
	p := filepath.Join(abs, NuvrootName)
	m, err := config.ReadJSON(p)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	return r, r.fill(p, m)
}

// LoadRootFS reads the nuvroot.json of an embedded bundle without extracting it (Dir is "").
func LoadRootFS(fsys fs.FS) (*Root, error) {
	r := &Root{Source: FromEmbedded, Config: map[string]any{}}
	data, err := fs.ReadFile(fsys, NuvrootName)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := config.DecodeJSON("embedded "+NuvrootName, data)
	if err != nil {
		return nil, err
	}
	return r, r.fill("embedded "+NuvrootName, m)
}

func (r *Root) fill(p string, m map[string]any) error {
	if v, ok := m["version"]; ok {
		r.Version = config.String(v)
	}
	if c, ok := m["config"]; ok {
		cm, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: \"config\" must be a JSON object", p)
		}
		r.Config = cm
	}
	return nil
}

func isFile(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
