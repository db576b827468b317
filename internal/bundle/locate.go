package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LocateOptions are the inputs of bundle discovery.
type LocateOptions struct {
	Getenv func(string) string
	// Dir is the working directory.
	Dir string
	// Home is nuv's home (~/.nuv); downloaded bundles live in Home/<Version>/olaris.
	Home    string
	Version string
	// Embedded is the bundle carried by the binary (nil: none); it is extracted under Home/cache.
	Embedded fs.FS
	// NoExtract returns the embedded bundle's nuvroot.json contents without extracting it (Dir is
	// then ""): enough for configuration, which every `nuv -task` run reads.
	NoExtract bool
}

// HomeDir is where `nuv -update` keeps the bundle for a nuv version.
func HomeDir(home, version string) string { return filepath.Join(home, version, "olaris") }

// Locate finds the main bundle: $NUV_ROOT; the nearest ancestor of the working directory holding
// nuvroot.json; ./olaris; ~/.nuv/<version>/olaris; last the embedded bundle.
func Locate(o LocateOptions) (*Root, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if env := getenv("NUV_ROOT"); env != "" {
		dir := env
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(o.Dir, dir)
		}
		if !isDir(dir) {
			return nil, fmt.Errorf("NUV_ROOT=%s is not a directory", env)
		}
		if !isFile(filepath.Join(dir, NuvrootName)) && !isFile(filepath.Join(dir, NuvfileName)) {
			return nil, fmt.Errorf("NUV_ROOT=%s holds neither %s nor %s", env, NuvrootName, NuvfileName)
		}
		return LoadRoot(dir, FromEnv)
	}
	if dir := walkUp(o.Dir); dir != "" {
		return LoadRoot(dir, FromParent)
	}
	if local := filepath.Join(o.Dir, "olaris"); isFile(filepath.Join(local, NuvrootName)) {
		return LoadRoot(local, FromLocal)
	}
	if o.Home != "" && o.Version != "" {
		if dl := HomeDir(o.Home, o.Version); isFile(filepath.Join(dl, NuvrootName)) {
			return LoadRoot(dl, FromHome)
		}
	}
	if o.Embedded != nil && o.NoExtract {
		return LoadRootFS(o.Embedded)
	}
	if o.Embedded != nil {
		if o.Home == "" {
			return nil, fmt.Errorf("no bundle found and no nuv home to extract the embedded one into")
		}
		dir, err := Extract(o.Embedded, filepath.Join(o.Home, "cache", "bundle"))
		if err != nil {
			return nil, err
		}
		return LoadRoot(dir, FromEmbedded)
	}
	return nil, fmt.Errorf("no task bundle found (set NUV_ROOT, add ./olaris, or run `nuv -update`)")
}

// walkUp returns the nearest ancestor of dir (dir included) that holds nuvroot.json.
func walkUp(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil || dir == "" {
		return ""
	}
	for d := abs; ; {
		if isFile(filepath.Join(d, NuvrootName)) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Plugins lists the installed plugins: the directories Home/olaris-<name>, sorted by name.
// A plugin whose nuvroot.json is malformed is returned as an error naming it.
func Plugins(home string) ([]*Root, error) {
	if home == "" {
		return nil, nil
	}
	matches, err := filepath.Glob(filepath.Join(home, "olaris-*"))
	if err != nil {
		return nil, err
	}
	var out []*Root
	for _, m := range matches {
		base := filepath.Base(m)
		if !isDir(m) || strings.HasPrefix(base, ".") || strings.Contains(base, ".tmp-") {
			continue
		}
		r, err := LoadRoot(m, FromPlugin)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", base, err)
		}
		r.Name = base
		out = append(out, r)
	}
	return out, nil
}
