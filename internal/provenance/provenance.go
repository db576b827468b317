// Package provenance finds files of a source tree that are copies, whole or lightly edited, of
// files the Go modules it depends on ship. nuv must not carry upstream files: what a module
// publishes nuv reads from the module, the rest it writes itself. The comparison is by sets of
// shingles (runs of a few consecutive significant lines, normalised, leaving out runs that many
// module files share): a file's against those of every module file of the same family, so
// re-indented, reordered, concatenated or partly edited copies are found too.
package provenance

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// MinLineLength is the shortest normalised line that counts: shorter ones ("spec:", "fi", "}")
// say nothing about where a file came from.
const MinLineLength = 12

// Window is how many consecutive significant lines make one shingle, the unit compared. A copy
// keeps runs of lines in their order; a file written anew with the same vocabulary (the keys
// of an API, a generator's sorted output) shares lines but seldom their sequence.
const Window = 3

// Common is how many module files may share a shingle before it counts as boilerplate and is
// ignored.
const Common = 25

// normalise trims a line of surrounding blanks and a trailing comma, drops quotes and squeezes
// inner blanks, so a value quoted or re-indented differently is the same line. buf is reused
// for the result (the module cache holds millions of lines: one allocation each would be most
// of the index's cost).
func normalise(l []byte, buf []byte) []byte {
	out := buf[:0]
	space := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c >= utf8.RuneSelf {
			return normaliseSlow(string(l), out)
		}
		switch c {
		case '"', '\'', '`':
			continue
		case ' ', '\t', '\n', '\v', '\f', '\r':
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, c)
	}
	if n := len(out); n > 0 && out[n-1] == ',' {
		out = out[:n-1]
		if n > 1 && out[n-2] == ' ' {
			out = out[:n-2]
		}
	}
	return out
}

// normaliseSlow is normalise for a line with non-ASCII text (Unicode blanks count as blanks).
func normaliseSlow(l string, buf []byte) []byte {
	l = strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' || r == '`' {
			return -1
		}
		return r
	}, l)
	l = strings.TrimSuffix(strings.TrimSpace(l), ",")
	return append(buf[:0], strings.Join(strings.Fields(l), " ")...)
}

// Lines returns the set of a file's shingles, hashed: every run of Window consecutive
// significant lines (normalised, at least MinLineLength long; shorter lines are skipped, not
// breaking a run).
func Lines(data []byte) map[uint64]struct{} {
	set := map[uint64]struct{}{}
	var run [Window]uint64 // the hashes of the last significant lines, oldest first
	n := 0
	var buf []byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		buf = normalise(line, buf)
		if len(buf) < MinLineLength {
			continue
		}
		copy(run[:], run[1:])
		run[Window-1] = hashLine(buf)
		if n++; n >= Window {
			h := uint64(fnvOffset)
			for _, x := range run {
				h = (h ^ x) * fnvPrime
			}
			set[h] = struct{}{}
		}
	}
	return set
}

// FNV-1a's 64-bit parameters: a line hashes as FNV-1a of its bytes, a run by the same step over
// its lines' hashes taken a word at a time. Written out rather than through hash/fnv, whose
// calls through hash.Hash64 made Lines twice as slow (BenchmarkLines, 2000 ops each).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashLine(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// Index holds the significant lines of many files (a module cache's) for Match.
type Index struct {
	files []string
	// where maps a line to the files that have it (indexes into files).
	where map[uint64][]int32
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{where: map[uint64][]int32{}} }

// Add indexes the file called name (a module file, named for the report).
func (x *Index) Add(name string, data []byte) {
	lines := Lines(data)
	if len(lines) == 0 {
		return
	}
	id := int32(len(x.files))
	x.files = append(x.files, name)
	for l := range lines {
		x.where[l] = append(x.where[l], id)
	}
}

// Files is how many files the index holds.
func (x *Index) Files() int { return len(x.files) }

// Match says how much of a given file the indexed files hold.
type Match struct {
	// Shared counts the file's significant, uncommon lines that some indexed file has; Of how
	// many such lines the file has. Similarity is Shared/Of.
	Shared, Of int
	Similarity float64
	// Sources are the indexed files holding most of the shared lines, the most first (at most 3).
	Sources []string
}

func (m Match) String() string {
	return fmt.Sprintf("%d of its %d runs of lines (%.0f%%) are in module files, most in %s",
		m.Shared, m.Of, 100*m.Similarity, strings.Join(m.Sources, ", "))
}

// Compare tells how much of data the indexed files hold: its uncommon significant lines (those
// at most Common indexed files share) found in any of them, and the files holding most of them.
// A copy of one module file, or of several concatenated, reordered or edited, shows up as a
// high Similarity.
func (x *Index) Compare(data []byte) Match {
	var m Match
	counts := map[int32]int{}
	for l := range Lines(data) {
		ids := x.where[l]
		if len(ids) > Common {
			continue // boilerplate
		}
		m.Of++
		if len(ids) > 0 {
			m.Shared++
		}
		for _, id := range ids {
			counts[id]++
		}
	}
	if m.Of > 0 {
		m.Similarity = float64(m.Shared) / float64(m.Of)
	}
	ids := make([]int32, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if counts[ids[i]] != counts[ids[j]] {
			return counts[ids[i]] > counts[ids[j]]
		}
		return ids[i] < ids[j]
	})
	for i := 0; i < len(ids) && i < 3; i++ {
		m.Sources = append(m.Sources, fmt.Sprintf("%s (%d)", x.files[ids[i]], counts[ids[i]]))
	}
	return m
}

// Copied tells whether a match means a copy: at least minShared lines found in module files,
// making up at least half of the file's significant lines.
func (m Match) Copied(minShared int) bool {
	return m.Shared >= minShared && m.Similarity >= 0.5
}

// Family groups file names by what they hold; files are only compared within a family.
func Family(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	case ".sh", ".bash":
		return "shell"
	case ".go":
		return "go"
	}
	return ""
}

// MaxFileSize bounds the files read: larger ones (generated API specs, test fixtures) are skipped.
const MaxFileSize = 2 << 20

// Walk calls fn for every regular file under root of one of the families, smaller than
// MaxFileSize, skipping directories skip says to (by name relative to root, "." never).
func Walk(root string, families map[string]bool, skip func(rel string) bool, fn func(path string, data []byte) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && skip != nil && skip(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !families[Family(path)] {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > MaxFileSize {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fn(path, data)
	})
}

// Module is one module of a go.mod's build (after replace directives).
type Module struct{ Path, Version string }

// Requirements reads the modules a go.mod requires (direct and indirect), with its replace
// directives applied (replacements by a local directory are left out: they are not upstream).
func Requirements(gomod []byte) ([]Module, error) {
	type key struct{ path, version string }
	var req []Module
	repl := map[string]Module{} // path or path@version -> replacement
	block := ""
	for n, raw := range strings.Split(string(gomod), "\n") {
		line := strings.TrimSpace(raw)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if line == ")" {
			block = ""
			continue
		}
		f := strings.Fields(line)
		if block == "" {
			if len(f) >= 2 && f[len(f)-1] == "(" {
				block = f[0]
				continue
			}
			if f[0] != "require" && f[0] != "replace" {
				continue
			}
			if err := parseEntry(f[0], f[1:], &req, repl); err != nil {
				return nil, fmt.Errorf("go.mod line %d: %w", n+1, err)
			}
			continue
		}
		if err := parseEntry(block, f, &req, repl); err != nil {
			return nil, fmt.Errorf("go.mod line %d: %w", n+1, err)
		}
	}
	seen := map[key]bool{}
	var out []Module
	for _, m := range req {
		r, ok := repl[m.Path+"@"+m.Version]
		if !ok {
			r, ok = repl[m.Path]
		}
		if ok {
			if r.Version == "" { // a directory
				continue
			}
			m = r
		}
		if !seen[key{m.Path, m.Version}] {
			seen[key{m.Path, m.Version}] = true
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func parseEntry(block string, f []string, req *[]Module, repl map[string]Module) error {
	switch block {
	case "require":
		if len(f) < 2 {
			return fmt.Errorf("require %q: want a module path and a version", strings.Join(f, " "))
		}
		*req = append(*req, Module{Path: f[0], Version: f[1]})
	case "replace":
		i := indexOf(f, "=>")
		if i < 1 || i == len(f)-1 {
			return fmt.Errorf("replace %q: want old => new", strings.Join(f, " "))
		}
		from := f[0]
		if i == 2 {
			from += "@" + f[1]
		}
		to := Module{Path: f[i+1]}
		if len(f) > i+2 {
			to.Version = f[i+2]
		}
		repl[from] = to
	}
	return nil
}

func indexOf(f []string, s string) int {
	for i, x := range f {
		if x == s {
			return i
		}
	}
	return -1
}

// Dir returns where the module cache holds m (GOMODCACHE's escaped path@version directory).
func Dir(modcache string, m Module) string {
	var b strings.Builder
	for _, r := range m.Path {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			b.WriteRune(r + 'a' - 'A')
			continue
		}
		b.WriteRune(r)
	}
	return filepath.Join(modcache, filepath.FromSlash(b.String())+"@"+m.Version)
}
