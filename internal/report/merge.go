package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// IncompatibleError is returned by Merge for a report directory written by a nuv whose report
// schema this nuv cannot read; it names both versions.
type IncompatibleError struct {
	Dir         string
	Schema      int
	Nuv, OurNuv string
}

func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("%s was written by nuv %s (report schema %d); this nuv %s reads report schemas 1 to %d: merge it with nuv %s or newer",
		e.Dir, orUnknown(e.Nuv), e.Schema, orUnknown(e.OurNuv), Schema, orUnknown(e.Nuv))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// MergeOptions configure Merge.
type MergeOptions struct {
	// Dirs are report directories (<reports>/<timestamp>/), or directories holding them at any
	// depth (a CI system's downloaded artifacts): every directory below that looks like a report
	// directory (report.json, junit.xml, index.html or logs/ in it) is one input.
	Dirs []string
	// Out is the directory the merged report is written to; it must not exist or be empty.
	Out string
	// Nuv is this nuv's version, recorded in the merged report and named in refusals.
	Nuv string
	Now func() time.Time
}

// Merge merges the reports of many runs (many machines, many targets) into one report in Out:
// report.json, junit.xml, index.html, and the logs and artifacts of every kept cell under
// runs/<run>/. A cell is a (cluster, target, path) triple; when several runs have the same cell the one
// that ended last is kept and the others are listed in its Superseded. Every cell keeps its
// provenance. A directory that is malformed or partial (no or unreadable report.json, an
// interrupted run, a log it names missing) is skipped and listed in the report's Skipped, never
// dropped silently. A report written with a newer schema than this nuv reads is refused with an
// IncompatibleError and nothing is written.
func Merge(o MergeOptions) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(o.Dirs) == 0 {
		return nil, errors.New("no report directories to merge")
	}
	if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("--out %s exists and is not empty: choose a new directory", o.Out)
	}
	sources, skipped, err := mergeSources(o)
	if err != nil {
		return nil, err
	}
	cells, order := mergeCells(sources)
	merged := &Report{Schema: Schema, Nuv: o.Nuv, Skipped: skipped}
	var start, end time.Time
	var froms []string // the upgrade paths of the cells (all-kubes plan --upgrade-from)
	for _, s := range sources {
		merged.Merged = append(merged.Merged, s.dir)
		if f := s.rep.UpgradeFrom; f != "" && !slices.Contains(froms, f) {
			froms = append(froms, f)
		}
	}
	sort.Strings(froms)
	merged.UpgradeFrom = strings.Join(froms, ", ")
	fill := func(tmp string) error {
		for _, k := range order {
			c := cells[k]
			res := c.res
			src := sources[c.src]
			sort.Slice(res.Superseded, func(i, j int) bool { return res.Superseded[i].Ended.After(res.Superseded[j].Ended) })
			prefix := "runs/" + src.key + "/"
			if res.Log != "" {
				if err := copyTree(filepath.Join(src.dir, filepath.FromSlash(res.Log)), filepath.Join(tmp, filepath.FromSlash(prefix+res.Log))); err != nil {
					return fmt.Errorf("copy log of %s from %s: %w", res.Cluster, src.dir, err)
				}
				res.Log = prefix + res.Log
			}
			if res.Artifacts != "" {
				if err := copyTree(filepath.Join(src.dir, filepath.FromSlash(res.Artifacts)), filepath.Join(tmp, filepath.FromSlash(prefix+res.Artifacts))); err != nil {
					return fmt.Errorf("copy artifacts of %s from %s: %w", res.Cluster, src.dir, err)
				}
				res.Artifacts = prefix + res.Artifacts
			}
			if p := res.Provenance; start.IsZero() || p.Started.Before(start) {
				start = p.Started
			}
			if p := res.Provenance; p.Ended.After(end) {
				end = p.Ended
			}
			merged.Results = append(merged.Results, res)
		}
		merged.Started = start
		merged.Seconds = Seconds(end.Sub(start))
		merged.Target = strings.Join(merged.Targets(), ", ")
		if len(merged.Targets()) == 1 {
			merged.Target = merged.Targets()[0]
			for i := range merged.Results {
				merged.Results[i].Target = ""
			}
		}
		return WriteDir(tmp, merged)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(o.Out)), 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", o.Out, err)
	}
	os.Remove(o.Out) // an empty directory given as --out
	if err := fsutil.PublishDir(filepath.Clean(o.Out), 0o755, fill, func(string) bool { return false }); err != nil {
		return nil, err
	}
	return merged, nil
}

// mergeSource is one report merged: its directory, the report, and runs/<key>/ in the output.
type mergeSource struct {
	dir string
	rep *Report
	key string
}

// mergeSources reads the report directories under o.Dirs; those that cannot be read are skipped,
// with the reason; a report of an incompatible schema is an error, as is nothing to merge.
func mergeSources(o MergeOptions) ([]mergeSource, []SkippedDir, error) {
	var inputs []string
	var skipped []SkippedDir
	for _, d := range o.Dirs {
		found, err := findReportDirs(d)
		if err != nil {
			skipped = append(skipped, SkippedDir{Dir: d, Reason: err.Error()})
			continue
		}
		inputs = append(inputs, found...)
	}
	var sources []mergeSource
	used := map[string]int{}
	for _, d := range inputs {
		rep, err := readReportDir(d)
		var inc *IncompatibleError
		if errors.As(err, &inc) {
			inc.OurNuv = o.Nuv
			return nil, nil, inc
		}
		if err != nil {
			skipped = append(skipped, SkippedDir{Dir: d, Reason: err.Error()})
			continue
		}
		key := safeName(filepath.Base(d))
		if used[key]++; used[key] > 1 {
			key = fmt.Sprintf("%s-%d", key, used[key])
		}
		sources = append(sources, mergeSource{dir: d, rep: rep, key: key})
	}
	if len(sources) == 0 {
		var why []string
		for _, s := range skipped {
			why = append(why, s.Dir+": "+s.Reason)
		}
		return nil, nil, fmt.Errorf("no report could be merged:\n  %s", strings.Join(why, "\n  "))
	}
	return sources, skipped, nil
}

// mergeKey is a cell of the merged matrix: a cluster, a target, a path.
type mergeKey struct{ cluster, target, path string }

// mergeCell is the result kept for a cell and the index of its source.
type mergeCell struct {
	res Result
	src int
}

// mergeCells keeps, for each cell, the result of the run that ended last (the others recorded as
// superseded), in the order the cells first appear.
func mergeCells(sources []mergeSource) (map[mergeKey]*mergeCell, []mergeKey) {
	cells := map[mergeKey]*mergeCell{}
	var order []mergeKey
	for i, s := range sources {
		for _, res := range s.rep.Results {
			res.Target = s.rep.TargetOf(res)
			if res.Provenance == nil { // schema 1: what the report itself knows
				p := Provenance{Run: filepath.Base(s.dir), Machine: "unknown (report schema 1)", Nuv: orUnknown(s.rep.Nuv),
					Started: res.Started, Ended: res.Started.Add(time.Duration(res.Seconds * float64(time.Second)))}
				if res.Attempts > 1 {
					p.Retries = res.Attempts - 1
				}
				res.Provenance = &p
			}
			p := *res.Provenance
			p.Dir = s.dir
			res.Provenance = &p
			k := mergeKey{res.Cluster, res.Target, PathOf(res)}
			old, ok := cells[k]
			if !ok {
				cells[k] = &mergeCell{res: res, src: i}
				order = append(order, k)
				continue
			}
			if newer(p, *old.res.Provenance) {
				res.Superseded = append(append(res.Superseded, old.res.Superseded...), *old.res.Provenance)
				cells[k] = &mergeCell{res: res, src: i}
			} else {
				old.res.Superseded = append(old.res.Superseded, p)
			}
		}
	}
	return cells, order
}

// newer tells whether run a of a cell is to be kept over run b: it ended later.
func newer(a, b Provenance) bool { return a.Ended.After(b.Ended) }

// findReportDirs returns dir if it is a report directory, else every report directory below it.
func findReportDirs(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("not readable: %w", err)
	}
	if !st.IsDir() {
		return nil, errors.New("not a directory")
	}
	if looksLikeReport(dir) {
		return []string{dir}, nil
	}
	var out []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == dir {
			return err
		}
		if looksLikeReport(p) {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no report.json in it or below it (not a report directory)")
	}
	sort.Strings(out)
	return out, nil
}

func looksLikeReport(dir string) bool {
	for _, f := range []string{JSONFile, JUnitFile, HTMLFile, "logs"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// readReportDir reads and checks one report directory.
func readReportDir(dir string) (*Report, error) {
	if err := resolvesInside(dir, JSONFile); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return nil, fmt.Errorf("partial report directory: %s missing (%v)", JSONFile, errors.Unwrap(err))
	}
	var head struct {
		Schema int    `json:"schema"`
		Nuv    string `json:"nuv"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("malformed %s: %v", JSONFile, err)
	}
	if head.Schema > Schema {
		return nil, &IncompatibleError{Dir: dir, Schema: head.Schema, Nuv: head.Nuv}
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("malformed %s: %v", JSONFile, err)
	}
	if r.Target == "" || len(r.Results) == 0 {
		return nil, fmt.Errorf("malformed %s: no target or no results", JSONFile)
	}
	if r.Partial {
		return nil, errors.New("partial report: the run was interrupted (cancelled cells)")
	}
	for _, res := range r.Results {
		if res.Cluster == "" || res.Status == "" {
			return nil, fmt.Errorf("malformed %s: a result without cluster or status", JSONFile)
		}
		for _, rel := range []string{res.Log, res.Artifacts} {
			if rel == "" {
				continue
			}
			if filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(filepath.FromSlash(rel)), "..") {
				return nil, fmt.Errorf("malformed %s: %s points outside the report directory", JSONFile, rel)
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return nil, fmt.Errorf("partial report directory: %s of %s missing", rel, res.Cluster)
			}
			if err := resolvesInside(dir, rel); err != nil {
				return nil, err
			}
		}
	}
	return &r, nil
}

// resolvesInside refuses a path rel of report directory dir that resolves (through symbolic
// links) outside dir: a merge copies only what the report directory holds.
func resolvesInside(dir, rel string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("not readable: %w", err)
	}
	p, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return nil // a missing file is reported as such where it is read
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if r, err := filepath.Rel(root, p); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s resolves to %s, outside the report directory (a symbolic link): refused", rel, p)
	}
	return nil
}

// copyTree copies a file, or the regular files under a directory, to dst.
func copyTree(src, dst string) error {
	return fsutil.EachFile(src, func(p, rel string) error {
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		target := filepath.Join(dst, rel)
		if rel == "." {
			target = dst
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// safeName makes a run name usable as one path element.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ' ' || r == '(' || r == ')' {
			return '_'
		}
		return r
	}, s)
}
