// Package dotenv reads the .env files nuv gives to tasks (the project root's, and a bundle
// folder's) with godotenv. Values from .env never override the process environment: callers pass
// them to the task runner as defaults (taskrun.Options.DefaultEnv).
package dotenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/joho/godotenv"
)

// FileName is the name of the file Dir loads.
const FileName = ".env"

// Load reads one .env file and returns its entries as sorted KEY=VALUE pairs. A missing file is
// not an error (nil, nil); a malformed one is, naming the file.
func Load(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	m, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		// godotenv quotes the rest of the file, which may hold secrets: say where, not what.
		msg := strings.TrimSpace(near.ReplaceAllString(err.Error(), ""))
		if line := errorLine(data, err); line > 0 {
			return nil, fmt.Errorf("parse %s:%d: %s", path, line, msg)
		}
		return nil, fmt.Errorf("parse %s: %s", path, msg)
	}
	if _, ok := m[""]; ok {
		// "=value" would give the task an environment entry without a name.
		if line := emptyKeyLine(data); line > 0 {
			return nil, fmt.Errorf("parse %s:%d: a variable without a name", path, line)
		}
		return nil, fmt.Errorf("parse %s: a variable without a name", path)
	}
	return pairs(m), nil
}

// emptyKeyLine returns the 1-based line of data that assigns a value to no name ("=x",
// "export =x", ": x"), or 0.
func emptyKeyLine(data []byte) int {
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "export "))
		if strings.HasPrefix(l, "=") || strings.HasPrefix(l, ":") {
			return i + 1
		}
	}
	return 0
}

// near is how godotenv's parse errors quote the rest of the file from the bad spot.
var near = regexp.MustCompile(`near "((?:[^"\\]|\\.)*)"$`)

// errorLine returns the 1-based line of data a godotenv parse error points at, or 0.
func errorLine(data []byte, err error) int {
	m := near.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	rest, uerr := strconv.Unquote(`"` + m[1] + `"`)
	if uerr != nil || rest == "" {
		return 0
	}
	i := bytes.LastIndex(data, []byte(rest))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// Dir loads dir/.env (see Load).
func Dir(dir string) ([]string, error) { return Load(filepath.Join(dir, FileName)) }

func pairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Merge returns the union of lists of KEY=VALUE pairs; for a key present in several lists the
// earliest list wins (pass the most specific first, e.g. a bundle folder's .env before the
// project's).
func Merge(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, kv := range l {
			k := kv
			for i := 0; i < len(kv); i++ {
				if kv[i] == '=' {
					k = kv[:i]
					break
				}
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, kv)
		}
	}
	return out
}
