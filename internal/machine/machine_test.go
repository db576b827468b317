package machine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// local runs command lines with this host's sh: the scripts Run, WriteFile and ReadFile send are
// checked against a real shell and file system.
type local struct{}

func (local) name() string { return "local" }

func (local) command(ctx context.Context, cmdline string, stdin io.Reader) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.Bytes(), &RunError{Machine: "local", ExitCode: ee.ExitCode(), Stderr: tail(stderr.Bytes())}
	}
	return stdout.Bytes(), err
}

// TestRun runs scripts the way every Machine does: sh -e, the script ahead of the caller's
// standard input, a failure with its code and stderr but never the script.
func TestRun(t *testing.T) {
	big := strings.Repeat("# padding line to make the script larger than a pipe buffer\n", 2000) + "cat\n"
	for _, tc := range []struct {
		name, script, stdin string
		want                string
		code                int
		stderr              string
	}{
		{name: "output", script: "echo one\necho two", want: "one\ntwo\n"},
		{name: "stdin", script: "read a\necho got $a\ncat", stdin: "first\nrest\n", want: "got first\nrest\n"},
		{name: "big script then stdin", script: big, stdin: "payload", want: "payload"},
		{name: "no stdin", script: "cat; echo end", want: "end\n"},
		{name: "set -e", script: "echo before\nfalse\necho after", want: "before\n", code: 1},
		{name: "exit code and stderr", script: "secret=hunter2\necho bad >&2\nexit 7", code: 7, stderr: "bad"},
		{name: "quotes", script: `printf '%s\n' "it's" '"q"'`, want: "it's\n\"q\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in io.Reader
			if tc.stdin != "" {
				in = strings.NewReader(tc.stdin)
			}
			out, err := run(context.Background(), local{}, tc.script, in)
			if tc.code == 0 && err != nil {
				t.Fatal(err)
			}
			if tc.code != 0 {
				var re *RunError
				if !errors.As(err, &re) || re.ExitCode != tc.code || !strings.Contains(re.Stderr, tc.stderr) {
					t.Fatalf("error %#v, want a RunError with code %d and stderr %q", err, tc.code, tc.stderr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error carries the script: %v", err)
				}
			}
			if string(out) != tc.want {
				t.Errorf("output %q, want %q", out, tc.want)
			}
		})
	}
}

// TestFiles writes and reads files through the scripts: atomic (no temporary file left), the
// mode, parents made, odd names quoted; a missing file is fs.ErrNotExist; bad paths refused.
func TestFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		rel  string
		data string
		mode fs.FileMode
	}{
		{"plain", "a/b/c.conf", "x=1\n", 0o644},
		{"secret", "keys/key", "-----BEGIN-----\n", 0o600},
		{"odd name", "it's here/$(touch pwned) name", "odd", 0o640},
		{"empty", "empty", "", 0o644},
		{"binary", "bin", "\x00\x01\xff\n\x00", 0o755},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.rel)
			if err := writeFile(ctx, local{}, p, []byte(tc.data), tc.mode); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil || st.Mode().Perm() != tc.mode {
				t.Fatalf("stat %v %v, want mode %v", st, err, tc.mode)
			}
			got, err := readFile(ctx, local{}, p)
			if err != nil || string(got) != tc.data {
				t.Errorf("read %q %v, want %q", got, err, tc.data)
			}
			entries, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") || strings.HasPrefix(e.Name(), ".") {
					t.Errorf("temporary file %s left", e.Name())
				}
			}
		})
	}
	if _, err := os.Stat("pwned"); err == nil {
		os.Remove("pwned")
		t.Error("a file name ran as a command")
	}
	// Overwriting keeps readers whole and takes the new mode.
	p := filepath.Join(dir, "a/b/c.conf")
	if err := writeFile(ctx, local{}, p, []byte("x=2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "x=2\n" {
		t.Errorf("after overwrite: %q", b)
	}
	if _, err := readFile(ctx, local{}, filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	for _, bad := range []string{"relative/path", "/a/../b", "/", "/a/"} {
		if err := writeFile(ctx, local{}, bad, nil, 0o644); err == nil || !strings.Contains(err.Error(), "not an absolute, clean file path") {
			t.Errorf("write %q: %v, want a refusal", bad, err)
		}
	}
	if err := writeFile(ctx, local{}, p, nil, fs.ModeDir|0o755); err == nil {
		t.Error("a directory mode was accepted")
	}
}

// TestKeys: PEM and authorized_keys round trips, fingerprints, owner-only key files.
func TestKeys(t *testing.T) {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.PrivatePEM("host")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n")) {
		t.Errorf("PEM starts %q", b[:40])
	}
	k2, err := ParseKey(b)
	if err != nil || k2.Fingerprint() != k.Fingerprint() {
		t.Fatalf("ParseKey: %v %v", k2, err)
	}
	line := k.AuthorizedKey("nuv@machine")
	if !strings.HasPrefix(line, "ssh-ed25519 AAAA") || !strings.HasSuffix(line, " nuv@machine") {
		t.Errorf("authorized key %q", line)
	}
	pub, err := ParsePublicKey(line)
	if err != nil || AuthorizedKey(pub, "") != k.AuthorizedKey("") {
		t.Errorf("ParsePublicKey: %v %v", pub, err)
	}
	if !strings.HasPrefix(k.Fingerprint(), "SHA256:") {
		t.Errorf("fingerprint %q", k.Fingerprint())
	}
	for _, bad := range []string{"", "ssh-ed25519 !!!", line + "\n" + line} {
		if _, err := ParsePublicKey(bad); err == nil {
			t.Errorf("ParsePublicKey(%q) accepted", bad)
		}
	}
	path := filepath.Join(t.TempDir(), "keys", "id_ed25519")
	if err := WriteKey(path, k, "nuv"); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]fs.FileMode{path: 0o600, path + ".pub": 0o644} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want mode %v", p, st, err, mode)
		}
	}
	if k3, err := ReadKey(path); err != nil || k3.Fingerprint() != k.Fingerprint() {
		t.Errorf("ReadKey: %v %v", k3, err)
	}
	os.Chmod(path, 0o644)
	if _, err := ReadKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("ReadKey of a readable key: %v", err)
	}
	if _, err := ParseKey([]byte("not a key")); err == nil {
		t.Error("ParseKey accepted garbage")
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"a": "'a'", "it's": `'it'\''s'`, "": "''", "$(x) `y`": "'$(x) `y`'"} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(in)).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh reads Quote(%q) as %q (%v)", in, out, err)
		}
	}
}
