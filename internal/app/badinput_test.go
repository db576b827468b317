package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

// TestBadInput drives the whole CLI (RunEnv, as main does) over broken inputs of every kind a user
// writes: cluster specs, add-on indexes, instance files, kubeconfigs of the clusters/ inventory,
// .env files and command-line flags and arguments. Each case is a file of testdata/badinput/<kind>/
// (see parseCase for its format) and asserts
//   - the message nuv prints: exactly for files (file:LINE: field: what is wrong); by regexps naming
//     the flag or word and its value for command lines, whose wording belongs to internal/cli,
//   - the exit code,
//   - that nothing was written: the project directory (its .nuv/ selection, kubeconfigs, state) and
//     NUV_HOME are byte for byte what they were before the command.
func TestBadInput(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "badinput", "*", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("%d bad-input cases; the table wants at least 40", len(files))
	}
	kinds := map[string]int{}
	for _, f := range files {
		kind := filepath.Base(filepath.Dir(f))
		kinds[kind]++
		name := kind + "/" + strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			c, err := parseCase(f)
			if err != nil {
				t.Fatal(err)
			}
			runBadInput(t, c)
		})
	}
	for _, k := range []string{"spec", "addons", "instance", "kubeconfig", "dotenv", "flags"} {
		if kinds[k] == 0 {
			t.Errorf("no bad-input case for %s", k)
		}
	}
}

// badCase is one broken input.
type badCase struct {
	args  []string          // the command line after "nuv"
	env   map[string]string // extra environment
	exit  int               // the exit code
	want  []string          // the printed error, line by line, exactly ("error:" lines)
	match []*regexp.Regexp  // or regexps the printed error must match ("match:" lines)
	files map[string]string // the project's files (paths below the project; "home/..." is NUV_HOME)
}

// parseCase reads a case file: a header of "key: value" lines, then the project's files, each
// introduced by a "-- path --" line (txtar's layout):
//
//	args: cluster plan -f $PROJECT/bad.yaml        (words split on spaces; '' is an empty word)
//	env: KUBE=kind                                  (repeatable)
//	exit: 1
//	error: $PROJECT/clusters/specs/bad.yaml:4: ...  (repeatable: the lines of the message)
//	match: ^nuv cluster create: --nodes ...         (repeatable; instead of or beside error:)
//
// In messages $PROJECT and $HOME stand for the project directory and NUV_HOME.
func parseCase(path string) (*badCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &badCase{env: map[string]string{}, files: map[string]string{}, exit: -1}
	var cur string
	var body strings.Builder
	flush := func() {
		if cur != "" {
			c.files[cur] = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			cur = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			continue
		}
		if cur != "" {
			body.WriteString(line)
			continue
		}
		if strings.TrimSpace(trimmed) == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, val, ok := strings.Cut(trimmed, ": ")
		if !ok {
			return nil, fmt.Errorf("%s: header line %q: want key: value", path, trimmed)
		}
		switch key {
		case "args":
			for _, w := range strings.Fields(val) {
				if w == "''" {
					w = ""
				}
				c.args = append(c.args, w)
			}
		case "env":
			k, v, _ := strings.Cut(val, "=")
			c.env[k] = v
		case "exit":
			if _, err := fmt.Sscan(val, &c.exit); err != nil {
				return nil, fmt.Errorf("%s: exit %q: %v", path, val, err)
			}
		case "error":
			c.want = append(c.want, val)
		case "match":
			re, err := regexp.Compile(val)
			if err != nil {
				return nil, fmt.Errorf("%s: match: %v", path, err)
			}
			c.match = append(c.match, re)
		default:
			return nil, fmt.Errorf("%s: unknown header %q", path, key)
		}
	}
	flush()
	if len(c.args) == 0 || c.exit < 0 || (len(c.want) == 0 && len(c.match) == 0) {
		return nil, fmt.Errorf("%s: a case needs args, exit and error or match", path)
	}
	return c, nil
}

// inventoryKubeconfig is a valid kubeconfig for the clusters/ inventory; nothing listens on its
// server, so a case that got as far as contacting the cluster would fail differently.
const inventoryKubeconfig = `apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: dev
  context: {cluster: dev, user: dev}
clusters:
- name: dev
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: dev
  user: {token: t0ken}
`

func runBadInput(t *testing.T, c *badCase) {
	root := t.TempDir()
	project, home := filepath.Join(root, "project"), filepath.Join(root, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"clusters/dev.kubeconfig": inventoryKubeconfig}
	for name, body := range c.files {
		files[name] = body
	}
	for name, body := range files {
		p := filepath.Join(project, name)
		if rest, ok := strings.CutPrefix(name, "home/"); ok {
			p = filepath.Join(home, rest)
		}
		if body == "<dir>\n" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, root)

	var out, errb bytes.Buffer
	exe, _ := os.Executable()
	env := &cli.Env{
		Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		Log:     cli.NewLogger(&errb, 0),
		Exe:     exe,
		Dir:     project,
		Getenv: func(k string) string {
			if v, ok := c.env[k]; ok {
				return v
			}
			switch k {
			case "NUV_HOME":
				return home
			case "NUV_PROJECT":
				return project
			case "PATH":
				return os.Getenv(k)
			case "HOME":
				return root
			}
			return ""
		},
	}
	args := []string{"nuv"}
	for _, a := range c.args {
		args = append(args, strings.ReplaceAll(a, "$PROJECT", project))
	}
	err := RunEnv(context.Background(), env, args)

	printed := ""
	if err != nil {
		printed = errorLine(err)
	}
	clean := func(s string) string {
		s = strings.ReplaceAll(s, project, "$PROJECT")
		s = strings.ReplaceAll(s, home, "$HOME")
		return strings.ReplaceAll(s, root, "$ROOT")
	}
	printed, stderr, stdout := clean(printed), clean(errb.String()), clean(out.String())
	report := fmt.Sprintf("nuv %s\nexit %d\nerror:\n%s\nstderr:\n%s\nstdout:\n%s", strings.Join(c.args, " "), cli.ExitCode(err), printed, stderr, stdout)
	if got := cli.ExitCode(err); got != c.exit {
		t.Errorf("exit %d, want %d\n%s", got, c.exit, report)
	}
	if len(c.want) > 0 {
		if want := strings.Join(c.want, "\n"); printed != want {
			t.Errorf("message:\n%s\nwant:\n%s\n\n%s", printed, want, report)
		}
	}
	for _, re := range c.match {
		if !re.MatchString(printed) {
			t.Errorf("message does not match %s\n%s", re, report)
		}
	}
	if strings.Contains(printed+stderr+stdout, "t0ken") {
		t.Errorf("the kubeconfig's token is printed\n%s", report)
	}
	after := snapshot(t, root)
	for _, d := range diffSnapshots(before, after) {
		t.Errorf("written: %s", d)
	}
}

// snapshot records every file and directory below root: mode and a digest of the content. The
// extracted copy of nuv's embedded task bundle (NUV_HOME/cache/bundle, content-addressed, published
// whole) is left out: nuv fills it on any command that looks into the bundle, bad or not. So is the
// project's record of the order clusters appeared in clusters/ (.nuv/order): it is an observation
// of clusters/, made whenever nuv numbers the clusters (a refused `kube use 7` lists them), so that
// the numbers a user saw stay the numbers. Every other file below .nuv/ (the selection) counts.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == filepath.Join("home", "cache", "bundle") {
			return fs.SkipDir
		}
		if rel == filepath.Join("home", "cache") || rel == filepath.Join("project", ".nuv") {
			return nil // the directories holding them; anything else in them counts
		}
		if rel == filepath.Join("project", ".nuv", "order") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += fmt.Sprintf(" %x", sha256.Sum256(b))
		} else if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			entry += " -> " + target
		}
		m[rel] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffSnapshots(before, after map[string]string) []string {
	var out []string
	for p, a := range after {
		b, ok := before[p]
		switch {
		case !ok:
			out = append(out, "created "+p)
		case a != b:
			out = append(out, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		}
	}
	sort.Strings(out)
	return out
}
