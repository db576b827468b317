package whiskapi

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/image/imagetest"
)

// The tests run against a real Redis (Debian's redis-server, which hack/test.sh installs) and a
// real CouchDB-compatible server: pouchdb-server, the server of nuv's whisk-couchdb image, from
// npm (installed once into the user's cache directory, or NUV_POUCHDB_SERVER naming its
// bin/pouchdb-server), in memory. Both listen on 127.0.0.1 only.

// pouchdbVersion is the version nuv's whisk-couchdb image runs (internal/image/debimage).
const pouchdbVersion = "4.2.0"

// startProcess starts cmd with its output in a buffer the test prints when it fails, and stops it
// at the end of the test.
func startProcess(t testing.TB, cmd *exec.Cmd) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(cmd.Path), out.String())
		}
	})
	return &out
}

// startRedis runs redis-server on a free loopback port without persistence and returns its address.
func startRedis(t testing.TB) string {
	t.Helper()
	return startRedisWith(t, "")
}

// startRedisWith is startRedis with password as requirepass (none when empty).
func startRedisWith(t testing.TB, password string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (apt-get install redis-server; hack/test.sh does): %v", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", imagetest.FreePort(t))
	_, port, _ := net.SplitHostPort(addr)
	args := []string{"--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir()}
	if password != "" {
		args = append(args, "--requirepass", password)
	}
	startProcess(t, exec.Command(bin, args...))
	c := newRedisClient(addr)
	c.password = password
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := c.ping(context.Background())
		if err == nil {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pouchdbServer is the path of pouchdb-server's script, installed with npm when missing.
func pouchdbServer(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("NUV_POUCHDB_SERVER"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "nuv", "test-npm", "pouchdb-server-"+pouchdbVersion)
	script := filepath.Join(dir, "node_modules", "pouchdb-server", "bin", "pouchdb-server")
	if _, err := os.Stat(script); err == nil {
		return script
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is not installed (apt-get install npm; hack/test.sh does): it installs pouchdb-server for these tests: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Logf("installing pouchdb-server@%s with npm into %s", pouchdbVersion, dir)
	cmd := exec.Command(npm, "install", "--prefix", tmp, "--ignore-scripts", "--omit=dev", "--no-audit", "--no-fund",
		"--no-update-notifier", "--no-package-lock", "pouchdb-server@"+pouchdbVersion)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install pouchdb-server@%s: %v\n%s", pouchdbVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(script); serr != nil { // not installed by a concurrent test either
			t.Fatal(err)
		}
	}
	return script
}

// startCouch runs pouchdb-server in memory on a free loopback port, creates the database db and
// returns the server's URL.
func startCouch(t testing.TB, db string) *url.URL {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (apt-get install nodejs npm): %v", err)
	}
	script := pouchdbServer(t)
	port := imagetest.FreePort(t)
	cmd := exec.Command(node, script, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--in-memory")
	cmd.Dir = t.TempDir() // it writes config.json and log.txt there
	startProcess(t, cmd)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(u.String() + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pouchdb-server on %s did not answer: %v", u, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPut, u.String()+"/"+db, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create database %s: HTTP %d", db, resp.StatusCode)
	}
	return u
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t testing.TB) string { return fmt.Sprintf("127.0.0.1:%d", imagetest.FreePort(t)) }

func TestRedisClientAgainstRedis(t *testing.T) {
	addr := startRedis(t)
	c := newRedisClient(addr)
	ctx := context.Background()
	for i := int64(1); i <= 3; i++ {
		n, err := c.incrWindow(ctx, "k", time.Minute)
		if err != nil || n != i {
			t.Fatalf("incr %d: %d, %v", i, n, err)
		}
	}
	r, err := c.do(ctx, []string{"TTL", "k"}, []string{"GET", "k"}, []string{"GET", "missing"}, []string{"LPUSH", "l", "a", "b"},
		[]string{"LRANGE", "l", "0", "-1"}, []string{"NOSUCHCOMMAND"})
	if err != nil {
		t.Fatal(err)
	}
	if ttl, ok := r[0].(int64); !ok || ttl <= 0 || ttl > 60 {
		t.Errorf("TTL = %v, want 1..60 (EXPIRE set with INCR)", r[0])
	}
	if string(r[1].([]byte)) != "3" {
		t.Errorf("GET k = %q", r[1])
	}
	if b, ok := r[2].([]byte); !ok || b != nil {
		t.Errorf("GET missing = %#v, want a null bulk string", r[2])
	}
	if arr, ok := r[4].([]any); !ok || len(arr) != 2 || string(arr[0].([]byte)) != "b" {
		t.Errorf("LRANGE = %#v", r[4])
	}
	if e, ok := r[5].(redisError); !ok || !strings.Contains(string(e), "unknown command") {
		t.Errorf("unknown command answered %#v, want an error reply", r[5])
	}
	// an error reply does not break the connection: the next command works
	if err := c.ping(ctx); err != nil {
		t.Fatal(err)
	}
	// a WRONGTYPE error reply of INCR is an error of incrWindow
	if _, err := c.incrWindow(ctx, "l", time.Minute); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("INCR of a list = %v, want WRONGTYPE", err)
	}
	if err := newRedisClient(closedAddr(t)).ping(ctx); err == nil {
		t.Error("PING of a closed port succeeded")
	}
}

func TestReadReplyRejectsMalformedReplies(t *testing.T) {
	for _, in := range []string{"", "+OK\n", ":x\r\n", "$5\r\nab\r\n", "$-2\r\n", "*1\r\n", "?\r\n", "$99999999\r\n"} {
		if v, err := readReply(bufioReader(in)); err == nil {
			t.Errorf("readReply(%q) = %#v, want an error", in, v)
		}
	}
}

// TestRedisRequiresThePassword: a Redis run as the operator runs it (requirepass) refuses every
// command of a client without the password (another pod writing straight into it) and of one
// with a wrong password; the controller's client, with the password, works across reconnects.
func TestRedisRequiresThePassword(t *testing.T) {
	const pass = "s3cretS3cretS3cretS3cretS3cret00"
	addr := startRedisWith(t, pass)
	ctx := context.Background()
	anon := newRedisClient(addr)
	r, err := anon.do(ctx, []string{"SET", "whisk:guest:actions", "evil"})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := r[0].(redisError); !ok || !strings.Contains(string(e), "NOAUTH") {
		t.Fatalf("anonymous SET answered %#v, want NOAUTH", r[0])
	}
	wrong := newRedisClient(addr)
	wrong.password = "guess"
	if err := wrong.ping(ctx); err == nil || !strings.Contains(err.Error(), "AUTH refused") || strings.Contains(err.Error(), "guess") {
		t.Fatalf("wrong password: %v, want AUTH refused without the password", err)
	}
	c := newRedisClient(addr)
	c.password = pass
	if n, err := c.incrWindow(ctx, "k", time.Minute); err != nil || n != 1 {
		t.Fatalf("with the password: %d, %v", n, err)
	}
	c.conn.Close() // a new connection (as after an error) authenticates again
	c.conn, c.rd = nil, nil
	if n, err := c.incrWindow(ctx, "k", time.Minute); err != nil || n != 2 {
		t.Fatalf("after a reconnect: %d, %v", n, err)
	}
	got, err := c.do(ctx, []string{"EXISTS", "whisk:guest:actions"})
	if err != nil || got[0].(int64) != 0 {
		t.Fatalf("the anonymous write landed: %v %v", got, err)
	}
}
