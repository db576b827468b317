package whiskapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

const (
	testUser = "23bc46b1-71f6-4ed5-8c54-816aa4f8c502"
	testKey  = "123zO3xZCLrMN6v2BKK1dXYFpXlPkccOFqm12CdAsMgRU4VrNZ9lyGVCGuMDGIwP"
)

type apiHarness struct {
	t    *testing.T
	srv  *Server
	url  string
	logs *bytes.Buffer
}

// newAPI serves a Server over HTTP on loopback with cfg (auth and namespace filled in).
func newAPI(t *testing.T, cfg Config) *apiHarness {
	t.Helper()
	if cfg.Namespace == "" {
		cfg.Namespace = "guest"
	}
	cfg.AuthUser, cfg.AuthKey = testUser, testKey
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if cfg.RequestsPerMinute == 0 {
		cfg.RequestsPerMinute = 10000
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	s := New(cfg, slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)))
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &apiHarness{t: t, srv: s, url: ts.URL, logs: &logs}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type reply struct {
	code int
	body []byte
	hdr  http.Header
}

func (r reply) errBody(t *testing.T) ErrorBody {
	t.Helper()
	var e ErrorBody
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" || len(e.Code) != 32 {
		t.Fatalf("HTTP %d body %s is not an OpenWhisk error (error, code): %v", r.code, r.body, err)
	}
	return e
}

func (r reply) action(t *testing.T) Action {
	t.Helper()
	var a Action
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("HTTP %d body %s: %v", r.code, r.body, err)
	}
	return a
}

// call does one request; auth "" sends the test key, "-" none.
func (h *apiHarness) call(method, path, auth string, body any) reply {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	switch auth {
	case "":
		req.SetBasicAuth(testUser, testKey)
	case "-":
	default:
		u, k, _ := strings.Cut(auth, ":")
		req.SetBasicAuth(u, k)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, b, resp.Header}
}

func nodeAction(code string) map[string]any {
	return map[string]any{"exec": map[string]any{"kind": "nodejs:20", "code": code}}
}

func TestActionsLifecycleAgainstCouchDB(t *testing.T) {
	h := newAPI(t, Config{CouchDBURL: startCouch(t, DefaultDatabase)})
	base := "/api/v1/namespaces/_/actions/"

	r := h.call("PUT", base+"hello", "", map[string]any{
		"exec":        map[string]any{"kind": "nodejs:20", "code": "function main() { return {hi: 1} }"},
		"parameters":  []map[string]any{{"key": "name", "value": "world"}},
		"annotations": []map[string]any{{"key": "web-export", "value": true}},
		"limits":      map[string]any{"timeout": 1000},
	})
	if r.code != 200 {
		t.Fatalf("create: HTTP %d %s", r.code, r.body)
	}
	a := r.action(t)
	if a.Namespace != "guest" || a.Name != "hello" || a.Version != "0.0.1" || a.Limits != (Limits{Timeout: 1000, Memory: 256, Logs: 10, Concurrency: 1}) ||
		a.Exec.Kind != "nodejs:20" || len(a.Parameters) != 1 || string(a.Parameters[0].Value) != `"world"` || a.Updated == 0 {
		t.Errorf("created action = %+v", a)
	}

	// a second create is a conflict; nothing changes
	r = h.call("PUT", base+"hello", "", nodeAction("other"))
	if r.code != http.StatusConflict || r.errBody(t).Error != msgExists {
		t.Errorf("create again: HTTP %d %s, want 409 %q", r.code, r.body, msgExists)
	}
	// overwrite updates: version +1, the fields not given are kept
	r = h.call("PUT", base+"hello?overwrite=true", "", map[string]any{"exec": map[string]any{"kind": "python:3", "code": "def main(a): return a"}})
	if r.code != 200 {
		t.Fatalf("overwrite: HTTP %d %s", r.code, r.body)
	}
	if a := r.action(t); a.Version != "0.0.2" || a.Exec.Kind != "python:3" || a.Limits.Timeout != 1000 || len(a.Annotations) != 1 {
		t.Errorf("overwritten action = %+v", a)
	}
	// overwrite=true of a missing action creates it
	if r = h.call("PUT", "/api/v1/namespaces/guest/actions/second?overwrite=true", "", nodeAction("x")); r.code != 200 || r.action(t).Version != "0.0.1" {
		t.Errorf("overwrite-create: HTTP %d %s", r.code, r.body)
	}

	r = h.call("GET", base+"hello", "", nil)
	if got := r.action(t); r.code != 200 || got.Exec.Code != "def main(a): return a" || got.Version != "0.0.2" {
		t.Errorf("get: HTTP %d %+v", r.code, got)
	}
	if got := h.call("GET", base+"hello?code=false", "", nil).action(t); got.Exec.Code != "" || got.Exec.Kind != "python:3" {
		t.Errorf("get ?code=false: %+v", got)
	}

	r = h.call("GET", "/api/v1/namespaces/_/actions", "", nil)
	var list []Action
	if err := json.Unmarshal(r.body, &list); err != nil || r.code != 200 || len(list) != 2 {
		t.Fatalf("list: HTTP %d %s (%v)", r.code, r.body, err)
	}
	if list[0].Name != "hello" || list[1].Name != "second" || list[0].Exec.Code != "" || list[0].Exec.Kind != "python:3" {
		t.Errorf("list = %+v (want hello, second without code)", list)
	}
	r = h.call("GET", "/api/v1/namespaces/_/actions?limit=1&skip=1", "", nil)
	if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 1 || list[0].Name != "second" {
		t.Errorf("list limit=1 skip=1: %s", r.body)
	}
	for q, want := range map[string]string{
		"limit=201": "The value '201' is not in the range of 0 to 200 for actions.",
		"skip=-1":   "The value '-1' is not greater than or equal to 0 for actions.",
		"limit=x":   "The value 'x' is not an integer for actions.",
	} {
		if r := h.call("GET", "/api/v1/namespaces/_/actions?"+q, "", nil); r.code != 400 || r.errBody(t).Error != want {
			t.Errorf("list ?%s: HTTP %d %s, want 400 %q", q, r.code, r.body, want)
		}
	}

	r = h.call("DELETE", base+"hello", "", nil)
	if r.code != 200 || r.action(t).Name != "hello" {
		t.Errorf("delete: HTTP %d %s", r.code, r.body)
	}
	for _, m := range []string{"DELETE", "GET"} {
		if r := h.call(m, base+"hello", "", nil); r.code != 404 || r.errBody(t).Error != msgNotFound {
			t.Errorf("%s after delete: HTTP %d %s, want 404", m, r.code, r.body)
		}
	}
	// a new create after the delete starts again at 0.0.1 (CouchDB's tombstone does not block it)
	if r := h.call("PUT", base+"hello", "", nodeAction("again")); r.code != 200 || r.action(t).Version != "0.0.1" {
		t.Errorf("create after delete: HTTP %d %s", r.code, r.body)
	}
	if strings.Contains(h.logs.String(), testKey) || strings.Contains(h.logs.String(), testUser) {
		t.Error("the key was logged")
	}
}

// TestConcurrentWritesUseRevisions: writers racing on one action never lose an update: every
// answer is a success or OpenWhisk's conflict, and the final version counts exactly the successes.
func TestConcurrentWritesUseRevisions(t *testing.T) {
	h := newAPI(t, Config{CouchDBURL: startCouch(t, DefaultDatabase)})
	path := "/api/v1/namespaces/guest/actions/raced"
	const writers, rounds = 6, 5
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range rounds {
				r := h.call("PUT", path+"?overwrite=true", "", nodeAction(fmt.Sprintf("// writer %d round %d", i, j)))
				if r.code == http.StatusConflict {
					if e := r.errBody(t); e.Error != msgConflict {
						t.Errorf("conflict body %q, want %q", e.Error, msgConflict)
					}
				} else if r.code != 200 {
					t.Errorf("HTTP %d %s", r.code, r.body)
				}
				mu.Lock()
				codes[r.code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	got := h.call("GET", path, "", nil).action(t)
	if want := fmt.Sprintf("0.0.%d", codes[200]); got.Version != want {
		t.Errorf("version %s after %d successful writes (%d conflicts), want %s: an update was lost", got.Version, codes[200], codes[409], want)
	}
	t.Logf("%d writers x %d rounds: %d written, %d conflicts", writers, rounds, codes[200], codes[409])

	// racing creates without overwrite: exactly one wins
	codes = map[int]int{}
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.call("PUT", "/api/v1/namespaces/guest/actions/created-once", "", nodeAction("x"))
			mu.Lock()
			codes[r.code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] != 1 || codes[409] != writers-1 {
		t.Errorf("racing creates: %v, want one 200 and %d 409", codes, writers-1)
	}
}

func TestAuthAndNamespaces(t *testing.T) {
	h := newAPI(t, Config{CouchDBURL: startCouch(t, DefaultDatabase)})
	r := h.call("GET", "/api/v1/namespaces/_/actions", "-", nil)
	if r.code != 401 || r.errBody(t).Error != msgNoAuth || !strings.HasPrefix(r.hdr.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("no auth: HTTP %d %s %v", r.code, r.body, r.hdr)
	}
	for _, bad := range []string{testUser + ":wrong", "other:" + testKey, testUser + ":" + testKey + "x"} {
		if r := h.call("GET", "/api/v1/namespaces/_/actions", bad, nil); r.code != 401 || r.errBody(t).Error != msgBadAuth {
			t.Errorf("bad auth: HTTP %d %s", r.code, r.body)
		}
	}
	if r := h.call("GET", "/api/v1/namespaces/someone/actions", "", nil); r.code != 403 ||
		r.errBody(t).Error != "The supplied authentication is not authorized to access 'someone'." {
		t.Errorf("other namespace: HTTP %d %s", r.code, r.body)
	}
	if r := h.call("GET", "/api/v1/namespaces", "", nil); r.code != 200 || strings.TrimSpace(string(r.body)) != `["guest"]` {
		t.Errorf("namespaces: HTTP %d %s", r.code, r.body)
	}
	if r := h.call("GET", "/api/v1/namespaces/guest/actions", "", nil); r.code != 200 || strings.TrimSpace(string(r.body)) != `[]` {
		t.Errorf("empty list: HTTP %d %s", r.code, r.body)
	}
}

func TestInvocationAndUnsupportedCollectionsAreRefused(t *testing.T) {
	h := newAPI(t, Config{CouchDBURL: startCouch(t, DefaultDatabase)})
	h.call("PUT", "/api/v1/namespaces/_/actions/a", "", nodeAction("x"))
	for _, tc := range []struct {
		method, path string
		code         int
		msg          string
	}{
		{"POST", "/api/v1/namespaces/_/actions/a?blocking=true", 501, msgNoInvoker},
		{"GET", "/api/v1/namespaces/_/packages", 501, "nuv's whisk-controller does not implement packages (it serves actions only)."},
		{"PUT", "/api/v1/namespaces/_/triggers/t", 501, "nuv's whisk-controller does not implement triggers (it serves actions only)."},
		{"GET", "/api/v1/namespaces/_/rules", 501, "nuv's whisk-controller does not implement rules (it serves actions only)."},
		{"GET", "/api/v1/namespaces/_/activations", 501, "nuv's whisk-controller does not implement activations (it serves actions only)."},
		{"GET", "/api/v1/namespaces/_/actions/pkg/a", 501, "nuv's whisk-controller does not implement packages: action names have no package part."},
		{"GET", "/api/v1/namespaces/_/things", 404, msgNotFound},
		{"GET", "/nothing/here", 404, msgNotFound},
		{"PATCH", "/api/v1/namespaces/_/actions/a", 405, "HTTP method not allowed, supported methods: GET, PUT, DELETE, POST"},
		{"POST", "/api/v1/namespaces/_/actions", 405, "HTTP method not allowed, supported methods: GET"},
		{"DELETE", "/api/v1/namespaces", 405, "HTTP method not allowed, supported methods: GET"},
		{"GET", "/api/v1/namespaces/_/actions/bad%21name", 400, "The name of the entity contains illegal characters."},
	} {
		r := h.call(tc.method, tc.path, "", nil)
		if r.code != tc.code || r.errBody(t).Error != tc.msg {
			t.Errorf("%s %s: HTTP %d %s, want %d %q", tc.method, tc.path, r.code, r.body, tc.code, tc.msg)
		}
	}
	// the action is still there, not "invoked" into anything
	if r := h.call("GET", "/api/v1/namespaces/_/actions/a", "", nil); r.code != 200 || r.action(t).Version != "0.0.1" {
		t.Errorf("get after refused invocation: HTTP %d %s", r.code, r.body)
	}
}

func TestPutRejectsMalformedActions(t *testing.T) {
	h := newAPI(t, Config{CouchDBURL: startCouch(t, DefaultDatabase)})
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"no exec", map[string]any{"parameters": []any{}}, "exec undefined"},
		{"no kind", map[string]any{"exec": map[string]any{"code": "x"}}, "exec malformed: no kind"},
		{"no code", map[string]any{"exec": map[string]any{"kind": "nodejs:20"}}, "exec malformed: kind nodejs:20 without code"},
		{"bad kind", map[string]any{"exec": map[string]any{"kind": "cobol", "code": "x"}}, "not <runtime>:<version>"},
		{"blackbox", map[string]any{"exec": map[string]any{"kind": "blackbox"}}, "blackbox without an image"},
		{"sequence", map[string]any{"exec": map[string]any{"kind": "sequence"}}, "No component specified for the sequence."},
		{"memory", map[string]any{"exec": map[string]any{"kind": "nodejs:20", "code": "x"}, "limits": map[string]any{"memory": 4096}}, "memory limit 4096 exceeds allowed range [128, 512]."},
		{"param key", map[string]any{"exec": map[string]any{"kind": "nodejs:20", "code": "x"}, "parameters": []map[string]any{{"value": 1}}}, "need a key"},
		{"not json", "{", "The request content was malformed"},
	} {
		r := h.call("PUT", "/api/v1/namespaces/_/actions/bad", "", tc.body)
		if r.code != 400 || !strings.Contains(r.errBody(t).Error, tc.want) {
			t.Errorf("%s: HTTP %d %s, want 400 containing %q", tc.name, r.code, r.body, tc.want)
		}
	}
	if r := h.call("GET", "/api/v1/namespaces/_/actions/bad", "", nil); r.code != 404 {
		t.Errorf("a rejected action was stored: HTTP %d %s", r.code, r.body)
	}
}

func TestThrottlingInRedis(t *testing.T) {
	h := newAPI(t, Config{CouchDBURL: startCouch(t, DefaultDatabase), RedisAddr: startRedis(t), RequestsPerMinute: 5})
	minute := time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)
	h.srv.now = func() time.Time { return minute }
	for i := 1; i <= 5; i++ {
		if r := h.call("GET", "/api/v1/namespaces/_/actions", "", nil); r.code != 200 {
			t.Fatalf("request %d: HTTP %d %s", i, r.code, r.body)
		}
	}
	r := h.call("GET", "/api/v1/namespaces/_/actions", "", nil)
	if r.code != 429 || r.errBody(t).Error != "Too many requests in the last minute (count: 6, allowed: 5)." {
		t.Errorf("6th request: HTTP %d %s, want 429", r.code, r.body)
	}
	// failed auth does not count; /ping and /ready are not throttled
	h.call("GET", "/api/v1/namespaces/_/actions", "-", nil)
	for _, p := range []string{"/ping", "/ready"} {
		if r := h.call("GET", p, "-", nil); r.code != 200 {
			t.Errorf("%s while throttled: HTTP %d %s", p, r.code, r.body)
		}
	}
	// the counter lives in Redis, with an expiry
	c := newRedisClient(h.srv.cfg.RedisAddr)
	rep, err := c.do(t.Context(), []string{"GET", h.srv.throttleKey("guest")}, []string{"TTL", h.srv.throttleKey("guest")})
	if err != nil || string(rep[0].([]byte)) != "6" || rep[1].(int64) <= 0 {
		t.Errorf("redis counter = %v, %v (want 6 with a TTL)", rep, err)
	}
	// the next minute has its own window
	minute = minute.Add(time.Minute)
	if r := h.call("GET", "/api/v1/namespaces/_/actions", "", nil); r.code != 200 {
		t.Errorf("next minute: HTTP %d %s", r.code, r.body)
	}
}

func TestReadiness(t *testing.T) {
	couch := startCouch(t, DefaultDatabase)
	redis := startRedis(t)
	dead, _ := url.Parse("http://" + closedAddr(t))
	for _, tc := range []struct {
		name string
		cfg  Config
		code int
		want map[string]string
	}{
		{"both up", Config{CouchDBURL: couch, RedisAddr: redis}, 200, map[string]string{"couchdb": "ok", "redis": "ok"}},
		{"nothing configured", Config{}, 200, map[string]string{"couchdb": "not configured", "redis": "not configured"}},
		{"redis down", Config{CouchDBURL: couch, RedisAddr: closedAddr(t)}, 503, map[string]string{"couchdb": "ok", "redis": "connection refused"}},
		{"couchdb down", Config{CouchDBURL: dead, RedisAddr: redis}, 503, map[string]string{"couchdb": "connection refused", "redis": "ok"}},
		{"database missing", Config{CouchDBURL: couch, Database: "nodb"}, 503, map[string]string{"couchdb": "database nodb does not exist"}},
	} {
		h := newAPI(t, tc.cfg)
		r := h.call("GET", "/ready", "-", nil)
		var got map[string]string
		_ = json.Unmarshal(r.body, &got)
		if r.code != tc.code {
			t.Errorf("%s: HTTP %d %s, want %d", tc.name, r.code, r.body, tc.code)
		}
		for k, v := range tc.want {
			if !strings.Contains(got[k], v) {
				t.Errorf("%s: %s = %q, want it to contain %q", tc.name, k, got[k], v)
			}
		}
		if r := h.call("GET", "/ping", "-", nil); r.code != 200 || string(r.body) != "pong" {
			t.Errorf("%s: /ping = HTTP %d %q", tc.name, r.code, r.body)
		}
	}
	// without CouchDB the entity calls say so
	h := newAPI(t, Config{})
	if r := h.call("GET", "/api/v1/namespaces/_/actions/a", "", nil); r.code != 503 || !strings.Contains(r.errBody(t).Error, EnvCouchDBURL) {
		t.Errorf("no couchdb: HTTP %d %s", r.code, r.body)
	}
}

func TestConfigFromEnv(t *testing.T) {
	auth := testUser + ":" + testKey
	for _, tc := range []struct {
		name string
		env  map[string]string
		err  string
		ok   func(Config) bool
	}{
		{"defaults", map[string]string{EnvAuth: auth}, "", func(c Config) bool {
			return c.Namespace == "guest" && c.Database == "whisks" && c.Port == 8080 && c.RequestsPerMinute == 600 &&
				c.CouchDBURL == nil && c.RedisAddr == "" && c.AuthUser == testUser && c.AuthKey == testKey
		}},
		{"everything", map[string]string{EnvAuth: auth, EnvNamespace: "team-a", EnvCouchDBURL: "http://admin:s3cret@db:5984/", EnvDatabase: "ents",
			EnvRedisAddr: "redis:6379", EnvRequestsPerMinute: "30", EnvPort: "9090"}, "", func(c Config) bool {
			return c.Namespace == "team-a" && c.CouchDBURL.String() == "http://admin:s3cret@db:5984" && c.Database == "ents" &&
				c.RedisAddr == "redis:6379" && c.RequestsPerMinute == 30 && c.Port == 9090 &&
				!strings.Contains(c.String(), "s3cret") && !strings.Contains(c.String(), testKey)
		}},
		{"store credentials", map[string]string{EnvAuth: auth, EnvCouchDBURL: "http://db:5984", EnvCouchDBUser: "whisk-admin", EnvCouchDBPassword: "pw0rd",
			EnvRedisAddr: "redis:6379", EnvRedisPassword: "r3dis"}, "", func(c Config) bool {
			p, _ := c.CouchDBURL.User.Password()
			return c.CouchDBURL.User.Username() == "whisk-admin" && p == "pw0rd" && c.RedisPassword == "r3dis" &&
				!strings.Contains(c.String(), "pw0rd") && !strings.Contains(c.String(), "r3dis")
		}},
		{"couchdb user without password", map[string]string{EnvAuth: auth, EnvCouchDBURL: "http://db:5984", EnvCouchDBUser: "whisk-admin"},
			"WHISK_COUCHDB_USER and WHISK_COUCHDB_PASSWORD go together", nil},
		{"no auth", map[string]string{}, "WHISK_AUTH is not set", nil},
		{"bad auth", map[string]string{EnvAuth: "guest:short"}, `WHISK_AUTH is not a key of the form "<uuid>:<key>"`, nil},
		{"bad namespace", map[string]string{EnvAuth: auth, EnvNamespace: "a/b"}, `WHISK_NAMESPACE="a/b"`, nil},
		{"bad couch", map[string]string{EnvAuth: auth, EnvCouchDBURL: "ftp://x:pw@h"}, `WHISK_COUCHDB_URL="ftp://x:xxxxx@h" is not an http(s) URL`, nil},
		{"bad redis", map[string]string{EnvAuth: auth, EnvRedisAddr: "redis"}, `WHISK_REDIS_ADDR="redis" is not host:port`, nil},
		{"bad limit", map[string]string{EnvAuth: auth, EnvRequestsPerMinute: "0"}, `WHISK_REQUESTS_PER_MINUTE="0" is not a positive number`, nil},
		{"bad port", map[string]string{EnvAuth: auth, EnvPort: "70000"}, `PORT="70000" is not a port number`, nil},
	} {
		c, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			} else if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "pw@") {
				t.Errorf("%s: the error shows a secret: %v", tc.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok(c):
			t.Errorf("%s: config %+v", tc.name, c)
		}
	}
}
