// Package config is nuv's configuration: the user's ~/.nuv/config.json (NUV_HOME overrides ~/.nuv),
// the `config` defaults of the bundle's nuvroot.json and of installed plugins, merged and exported
// to every task as UPPER_SNAKE variables ({"a":{"b":1}} -> A_B=1).
//
// Keys given on the command line are UPPER_SNAKE or lower_snake words; "_" separates nesting levels
// (`nuv -config KUBE_NODES=3` stores {"kube":{"nodes":3}}). Values are parsed as JSON when they are
// JSON (numbers, booleans, null, arrays, objects), otherwise kept as strings.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// FileName is the user configuration file inside nuv's home.
const FileName = "config.json"

// Path returns the user configuration file for a nuv home directory.
func Path(home string) string { return filepath.Join(home, FileName) }

// Load reads a configuration file; a missing file is an empty configuration. Malformed JSON is an
// error naming the file, line and column.
func Load(path string) (map[string]any, error) {
	m, err := ReadJSON(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	return m, err
}

// Save writes cfg to path atomically with mode 0600 (it may hold credentials).
func Save(path string, cfg map[string]any) error {
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return fsutil.WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// SplitKey turns a command-line key (FOO_BAR, foo_bar or foo.bar) into its lower-case path.
func SplitKey(key string) ([]string, error) {
	k := strings.ToLower(strings.TrimSpace(key))
	parts := strings.FieldsFunc(k, func(r rune) bool { return r == '_' || r == '.' })
	if k == "" || len(parts) == 0 || strings.Contains(k, "__") || strings.HasPrefix(k, "_") || strings.HasSuffix(k, "_") {
		return nil, fmt.Errorf("invalid config key %q: use words separated by single underscores, e.g. KUBE_NODES", key)
	}
	for _, p := range parts {
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return nil, fmt.Errorf("invalid config key %q: %q is not allowed", key, r)
			}
		}
	}
	return parts, nil
}

// ParseValue interprets a command-line value: JSON when it parses as JSON, else the string itself.
func ParseValue(s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		return v
	}
	return s
}

// Set stores value under key (see SplitKey), creating nested objects. It refuses to turn an
// existing value into an object or the reverse, naming the conflicting key.
func Set(cfg map[string]any, key string, value any) error {
	parts, err := SplitKey(key)
	if err != nil {
		return err
	}
	cur := cfg
	for i, p := range parts[:len(parts)-1] {
		next, ok := cur[p]
		if !ok {
			m := map[string]any{}
			cur[p] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("config key %s: %s already holds a value; delete it first with `nuv -config -d %s`",
				strings.ToUpper(key), EnvName(parts[:i+1]), EnvName(parts[:i+1]))
		}
		cur = m
	}
	last := parts[len(parts)-1]
	if _, isMap := cur[last].(map[string]any); isMap {
		if _, newMap := value.(map[string]any); !newMap {
			return fmt.Errorf("config key %s holds nested keys; delete it first with `nuv -config -d %s`",
				strings.ToUpper(key), strings.ToUpper(key))
		}
	}
	cur[last] = value
	return nil
}

// Delete removes key and any objects left empty; it reports whether the key existed.
func Delete(cfg map[string]any, key string) (bool, error) {
	parts, err := SplitKey(key)
	if err != nil {
		return false, err
	}
	return deletePath(cfg, parts), nil
}

func deletePath(m map[string]any, parts []string) bool {
	if len(parts) == 1 {
		_, ok := m[parts[0]]
		delete(m, parts[0])
		return ok
	}
	sub, ok := m[parts[0]].(map[string]any)
	if !ok {
		return false
	}
	found := deletePath(sub, parts[1:])
	if found && len(sub) == 0 {
		delete(m, parts[0])
	}
	return found
}

// Merge deep-merges layers into a new map; later layers win, objects merge key by key.
func Merge(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, l := range layers {
		mergeInto(out, l)
	}
	return out
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[k] = dm
			}
			mergeInto(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// EnvName joins a key path into an UPPER_SNAKE variable name; characters that cannot appear in a
// variable name become "_".
func EnvName(path []string) string {
	s := strings.ToUpper(strings.Join(path, "_"))
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// Flatten maps every leaf of cfg to its UPPER_SNAKE name and string value.
func Flatten(cfg map[string]any) map[string]string {
	out := map[string]string{}
	flatten(cfg, nil, out)
	return out
}

func flatten(m map[string]any, prefix []string, out map[string]string) {
	for k, v := range m {
		p := append(append([]string{}, prefix...), k)
		if sub, ok := v.(map[string]any); ok {
			flatten(sub, p, out)
			continue
		}
		out[EnvName(p)] = String(v)
	}
}

// String renders a leaf value as a task sees it: strings as-is, null as "", numbers and booleans
// literally, arrays and objects as JSON.
func String(v any) string {
	switch o := v.(type) {
	case nil:
		return ""
	case string:
		return o
	case json.Number:
		return o.String()
	case bool:
		if o {
			return "true"
		}
		return "false"
	default:
		b, err := json.Marshal(o)
		if err != nil {
			return fmt.Sprint(o)
		}
		return string(b)
	}
}

// Env returns cfg as sorted KEY=VALUE pairs.
func Env(cfg map[string]any) []string {
	flat := Flatten(cfg)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+flat[k])
	}
	return out
}

// Secrets returns the extra key names the configuration asks nuv to mask (the `secrets` key: a list
// of names, or one comma-separated string), upper-cased.
func Secrets(cfg map[string]any) []string {
	var names []string
	switch v := cfg["secrets"].(type) {
	case []any:
		for _, x := range v {
			names = append(names, String(x))
		}
	case string:
		names = strings.Split(v, ",")
	}
	out := names[:0]
	for _, n := range names {
		if n = strings.ToUpper(strings.TrimSpace(n)); n != "" {
			out = append(out, n)
		}
	}
	return out
}
