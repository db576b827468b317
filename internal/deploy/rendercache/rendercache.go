// Package rendercache remembers what `nuv status` needs of the operator's rendered manifests (the
// Deployments, by kind, namespace and name, in apply order), so the slim front can answer `nuv
// status` without kustomize. nuv's full program (package deploy) writes a record each time it
// renders the operator (`nuv operator`, `nuv status`, `nuv run`, ...); the front reads it.
//
// A record is keyed by everything the render depends on: the content of operator/config (every
// file, by its path inside the directory) and the inputs of the image choice (MY_OPERATOR_IMAGE,
// TAG and the reference build-and-load recorded for the cluster). Any change gives another key,
// so a record is never stale: it is there for exactly these inputs or it is not. Records live in
// <cache>/operator-render/<key>.json (nuv's cache directory, package companion), written
// atomically; they hold object names only, nothing secret.
package rendercache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
)

// format is the version of the key's recipe and of the record; a change makes new keys.
const format = "nuv operator render 1"

// keep is how long a record unused (not written again) stays before a write prunes it.
const keep = 30 * 24 * time.Hour

// OperatorDir is the operator's source directory of the module at source: $NUV_OPERATOR_DIR
// (relative to source unless absolute), else <source>/operator.
func OperatorDir(source string, getenv func(string) string) string {
	if d := getenv("NUV_OPERATOR_DIR"); d != "" {
		if filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(source, d)
	}
	return filepath.Join(source, "operator")
}

// ConfigDir is the operator's kustomization directory (<operator dir>/config).
func ConfigDir(source string, getenv func(string) string) string {
	return filepath.Join(OperatorDir(source, getenv), "config")
}

// ImageRefFile is where `nuv image load` (build-and-load) records the operator image it loaded
// into cluster of project.
func ImageRefFile(project, cluster string) string {
	return filepath.Join(paths.ProjectState(project), "images", cluster+".ref")
}

// EachFile calls fn with the slash-separated path (relative to dir) and the content of every
// file under dir, in lexical order: what the render reads of operator/config is what its key
// hashes.
func EachFile(dir string, fn func(rel string, data []byte) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), data)
	})
}

// Key is the key of the render of configDir for cluster of project with the environment of
// getenv: a hash of every file under configDir (path and content) and of the image choice's
// inputs. An unreadable directory or file is an error.
func Key(configDir, project, cluster string, getenv func(string) string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", format)
	err := EachFile(configDir, func(rel string, data []byte) error {
		fmt.Fprintf(h, "file %q %d\n", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("operator manifests %s: %w", configDir, err)
	}
	for _, k := range []string{"MY_OPERATOR_IMAGE", "TAG"} {
		v := getenv(k)
		fmt.Fprintf(h, "env %s %d %s\n", k, len(v), v)
	}
	if cluster != "" {
		ref, err := os.ReadFile(ImageRefFile(project, cluster))
		switch {
		case err == nil:
			fmt.Fprintf(h, "ref %d %s\n", len(ref), ref)
		case os.IsNotExist(err):
			fmt.Fprintf(h, "no ref\n")
		default:
			return "", fmt.Errorf("operator image reference: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// Object names one object of the render.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// Record is what status needs of one render.
type Record struct {
	Format string `json:"format"`
	// Deployments are the render's Deployments in apply order.
	Deployments []Object `json:"deployments"`
}

// Dir is where the records are kept: <nuv's cache directory>/operator-render.
func Dir(getenv func(string) string) string {
	return filepath.Join(companion.CacheDir(getenv), "operator-render")
}

// Save writes the record of key to dir atomically, and removes records not written for 30 days.
func Save(dir, key string, deployments []Object) error {
	if deployments == nil {
		deployments = []Object{}
	}
	data, err := json.Marshal(Record{Format: format, Deployments: deployments})
	if err != nil {
		return fmt.Errorf("operator render record: %w", err)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, key+".json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("operator render record: %w", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > keep {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// Load reads the record of key from dir; ok is false when there is none or it does not decode as
// this nuv writes it.
func Load(dir, key string) (deployments []Object, ok bool) {
	data, err := os.ReadFile(filepath.Join(dir, key+".json"))
	if err != nil {
		return nil, false
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil || r.Format != format || r.Deployments == nil {
		return nil, false
	}
	for _, d := range r.Deployments {
		if d.APIVersion == "" || d.Kind == "" || d.Name == "" {
			return nil, false
		}
	}
	return r.Deployments, true
}
