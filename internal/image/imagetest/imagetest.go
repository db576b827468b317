// Package imagetest holds test helpers for nuv's image packages: a real Debian docker-registry
// (distribution 2.8) on loopback with htpasswd authentication, and real git repositories holding a
// tiny Go main package to build.
package imagetest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a running docker-registry.
type Registry struct {
	Host     string // 127.0.0.1:port
	User     string
	Password string
	Dir      string // storage root
	Log      *bytes.Buffer
}

// RegistryBinary is the Debian package's binary (apt-get install docker-registry).
const RegistryBinary = "docker-registry"

// StartRegistry starts docker-registry on a free loopback port with htpasswd auth for user and
// password (bcrypt, written with htpasswd when apache2-utils is installed), storage in a temp dir,
// stopped in t.Cleanup. A missing binary fails the test (it is skipped only under -short).
func StartRegistry(t testing.TB, user, password string) *Registry {
	t.Helper()
	bin, err := exec.LookPath(RegistryBinary)
	if err != nil {
		if testing.Short() {
			t.Skipf("%s not installed; skipped under -short: %v", RegistryBinary, err)
		}
		t.Fatalf("%s not installed (apt-get install docker-registry apache2-utils; hack/test.sh does): %v", RegistryBinary, err)
	}
	dir := t.TempDir()
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := writeHtpasswd(htpasswd, user, password); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: nuv-test-secret
auth:
  htpasswd:
    realm: nuv-test
    path: %s
`, filepath.Join(dir, "storage"), host, htpasswd)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &Registry{Host: host, User: user, Password: password, Dir: filepath.Join(dir, "storage"), Log: &bytes.Buffer{}}
	cmd := exec.Command(bin, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = r.Log, r.Log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return r
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited at start:\n%s", bin, r.Log)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not answer on %s:\n%s", bin, host, r.Log)
	return nil
}

func writeHtpasswd(path, user, password string) error {
	if bin, err := exec.LookPath("htpasswd"); err == nil {
		// -i reads the password from stdin: it never appears on a command line
		cmd := exec.Command(bin, "-B", "-c", "-i", path, user)
		cmd.Stdin = strings.NewReader(password)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("htpasswd: %v: %s", err, out)
		}
		return nil
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(user+":"+string(hash)+"\n"), 0o600)
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// MainSource is the tiny operator stand-in GoModule writes.
const MainSource = `package main

import "fmt"

var version = "unset"

func main() { fmt.Println("hello operator", version) }
`

// GoModule makes dir a git repository holding a Go module example.com/hello with a main package
// at ./cmd/hello, committed at a fixed date (so its SOURCE_DATE_EPOCH is known), with an origin
// remote. It returns the commit time.
func GoModule(t testing.TB, dir string) int64 {
	t.Helper()
	files := map[string]string{
		"go.mod":            "module example.com/hello\n\ngo 1.22\n",
		"cmd/hello/main.go": MainSource,
		"Taskfile.yml":      "version: '3'\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "remote", "add", "origin", "git@github.com:nuv-dev/hello.git")
	Git(t, dir, "add", ".")
	Git(t, dir, "commit", "-q", "-m", "hello")
	return 1767225600 // GitEnv's commit date, 2026-01-01T00:00:00Z
}

// Git runs git in dir with a fixed identity and dates and returns its output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), GitEnv()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitEnv fixes git's identity and dates for reproducible test commits.
func GitEnv() []string {
	return []string{
		"GIT_AUTHOR_NAME=nuv test", "GIT_AUTHOR_EMAIL=test@nuv.invalid",
		"GIT_COMMITTER_NAME=nuv test", "GIT_COMMITTER_EMAIL=test@nuv.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1",
	}
}
