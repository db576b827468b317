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
	"sort"
	"strconv"
	"strings"

	"github.com/joho/godotenv"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// FileName is the name of the file Dir loads.
const FileName = ".env"

// Load reads one .env file and returns its entries as sorted KEY=VALUE pairs. A missing file is
// not an error (nil, nil); a malformed one is, naming the file and the line, never the values (a
// .env holds secrets).
func Load(path string) ([]string, error) {
	m, err := Read(path)
	if err != nil || m == nil {
		return nil, err
	}
	return pairs(m), nil
}

// Read is Load as a map; a missing file is (nil, nil).
func Read(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	m, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		if strings.HasPrefix(err.Error(), "unterminated quoted value") {
			line, key := unterminated(data)
			return nil, fmt.Errorf("parse %s:%d: %s: the quoted value is never closed (a closing quote is missing)", path, line, key)
		}
		// godotenv quotes the rest of the file, which may hold secrets: say where, not what.
		msg := strings.TrimSpace(near.ReplaceAllString(err.Error(), ""))
		if strings.Contains(msg, `unexpected character "\n" in variable name`) {
			msg = "a line without '='"
		}
		if line := errorLine(data, err); line > 0 {
			return nil, fmt.Errorf("parse %s:%d: %s (want KEY=value)", path, line, msg)
		}
		return nil, fmt.Errorf("parse %s: %s", path, msg)
	}
	for k := range m {
		if !keyRE.MatchString(k) {
			return nil, fmt.Errorf("parse %s:%d: variable name %q: want letters, digits and _, not starting with a digit", path, keyLine(data, k), k)
		}
	}
	return m, nil
}

// keyRE is what a variable name may be: what a shell can expand (and dots, which Java-style
// tools use in the environment).
var keyRE = lazy.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

var exportPrefix = lazy.MustCompile(`^\s*(export\s+)?`)

// keyLine is the 1-based line defining key (first occurrence), or 0.
func keyLine(data []byte, key string) int {
	for i, line := range strings.Split(string(data), "\n") {
		rest := line[len(exportPrefix.FindString(line)):]
		if strings.HasPrefix(rest, key) {
			if r := strings.TrimLeft(rest[len(key):], " \t"); strings.HasPrefix(r, "=") || strings.HasPrefix(r, ":") {
				return i + 1
			}
		}
	}
	return 0
}

// unterminated finds the entry whose quoted value is never closed: its line and key. It follows
// godotenv's rules: a value starting with ' or " runs to the matching unescaped quote, across lines.
func unterminated(data []byte) (int, string) {
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		rest := line[len(exportPrefix.FindString(line)):]
		eq := strings.IndexAny(rest, "=:")
		if eq < 0 {
			continue
		}
		key := strings.TrimSpace(rest[:eq])
		val := strings.TrimLeft(rest[eq+1:], " \t")
		if val == "" || (val[0] != '"' && val[0] != '\'') {
			continue
		}
		q := val[0]
		text := val[1:]
		start := i
		for {
			if closed(text, q) {
				break
			}
			i++
			if i >= len(lines) {
				return start + 1, key
			}
			text = lines[i]
		}
	}
	return 0, "a value"
}

// closed tells whether s holds an unescaped quote q.
func closed(s string, q byte) bool {
	for j := 0; j < len(s); j++ {
		if s[j] == '\\' && q == '"' {
			j++
			continue
		}
		if s[j] == q {
			return true
		}
	}
	return false
}

// near is how godotenv's parse errors quote the rest of the file from the bad spot.
var near = lazy.MustCompile(`near "((?:[^"\\]|\\.)*)"$`)

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
