package emucore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authv1 "k8s.io/api/authentication/v1"

	"github.com/nuv-dev/nuv/internal/proc"
)

// TestMain doubles as the serving process of TestDaemonUpStatusDown: with EMUCORE_SERVE=1 the
// test binary listens on --addr, records itself in --dir and answers /_nuv/health.
func TestMain(m *testing.M) {
	if os.Getenv("EMUCORE_SERVE") == "1" {
		serve()
		return
	}
	os.Exit(m.Run())
}

func serve() {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dir := fs.String("dir", "", "")
	addr := fs.String("addr", "", "")
	_ = fs.Parse(os.Args[1:])
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		os.Exit(3)
	}
	_, start, _ := proc.Stat(os.Getpid())
	if err := WriteRecord(*dir, Record{PID: os.Getpid(), Start: start, Addr: ln.Addr().String(), Dir: *dir}); err != nil {
		os.Exit(4)
	}
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_nuv/health" {
			http.NotFound(w, r)
		}
	}))
}

func TestDaemonUpStatusDown(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "emu")
	d := Daemon{Name: "test emulator", PortEnv: "NUV_TEST_PORT", Ping: func(ctx context.Context, _, addr string) error {
		return Ping(ctx, http.DefaultClient, "http", addr, "test emulator")
	}}
	if _, ok, err := d.Status(ctx, dir); ok || err != nil {
		t.Fatalf("status before up: running %v, %v; want stopped, no error", ok, err)
	}
	if _, _, err := d.Up(ctx, UpOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "test emulator up: no command") {
		t.Fatalf("up without a command: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := UpOptions{Dir: dir, Command: []string{exe}, Env: append(os.Environ(), "EMUCORE_SERVE=1")}
	r, started, err := d.Up(ctx, o)
	if err != nil || !started {
		t.Fatalf("up: started %v, %v", started, err)
	}
	t.Cleanup(func() { _, _ = d.Down(ctx, dir) })
	if r.Dir != dir || !strings.HasPrefix(r.Addr, "127.0.0.1:") || r.PID == os.Getpid() {
		t.Fatalf("record %+v", r)
	}
	if fi, err := os.Stat(filepath.Join(dir, "emulator.log")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log: %v %v", fi, err)
	}
	again, started, err := d.Up(ctx, o)
	if err != nil || started || again != r {
		t.Fatalf("second up: %+v started %v, %v; want the running one", again, started, err)
	}
	if got, ok, err := d.Status(ctx, dir); !ok || err != nil || got != r {
		t.Fatalf("status: %+v %v %v", got, ok, err)
	}
	if stopped, err := d.Down(ctx, dir); !stopped || err != nil {
		t.Fatalf("down: %v %v", stopped, err)
	}
	if _, err := ReadRecord(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("record after down: %v", err)
	}
	if stopped, err := d.Down(ctx, dir); stopped || err != nil {
		t.Fatalf("second down: %v %v", stopped, err)
	}
}

func TestReadRecordCorrupt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(ProcessFile(dir), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecord(dir); err == nil || !strings.Contains(err.Error(), ProcessFile(dir)) {
		t.Fatalf("corrupt record: %v, want an error naming the file", err)
	}
}

func TestPing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_nuv/health" {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := Ping(context.Background(), srv.Client(), "http", addr, "x emulator"); err != nil {
		t.Fatal(err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	baddr := strings.TrimPrefix(bad.URL, "http://")
	err := Ping(context.Background(), bad.Client(), "http", baddr, "x emulator")
	if want := "x emulator at " + baddr + " answered HTTP 503"; err == nil || err.Error() != want {
		t.Fatalf("ping: %v, want %q", err, want)
	}
}

func TestSaveLoadJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	type st struct{ Secret string }
	var got st
	if err := LoadJSON(path, "test emulator", &got); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("load of no file: %v, want os.ErrNotExist", err)
	}
	if err := SaveJSON(path, "test emulator", st{"s3cret"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode: %v %v, want 0600", fi, err)
	}
	if err := LoadJSON(path, "test emulator", &got); err != nil || got.Secret != "s3cret" {
		t.Fatalf("load: %+v %v", got, err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := LoadJSON(path, "test emulator", &got)
	if err == nil || !strings.HasPrefix(err.Error(), "test emulator state "+path+" is corrupt: ") {
		t.Fatalf("corrupt: %v", err)
	}
	if err := SaveJSON(path, "test emulator", func() {}); err == nil || !strings.HasPrefix(err.Error(), "encode test emulator state: ") {
		t.Fatalf("unencodable: %v", err)
	}
}

func TestFires(t *testing.T) {
	for _, c := range []struct {
		every, count, fired, n int
		want                   bool
	}{
		{0, 0, 5, 1, true},
		{1, 0, 0, 7, true},
		{3, 0, 0, 2, false},
		{3, 0, 0, 3, true},
		{3, 0, 0, 6, true},
		{0, 2, 1, 2, true},
		{0, 2, 2, 3, false},
		{2, 1, 1, 4, false},
	} {
		if got := Fires(c.every, c.count, c.fired, c.n); got != c.want {
			t.Errorf("Fires(every %d, count %d, fired %d, call %d) = %v, want %v", c.every, c.count, c.fired, c.n, got, c.want)
		}
	}
}

func TestNamesSegment(t *testing.T) {
	eq := func(a, b string) bool { return a == b }
	for _, c := range []struct {
		name, res string
		equal     func(a, b string) bool
		want      bool
	}{
		{"/subscriptions/x/resourceGroups/rg/clusters/c1", "c1", eq, true},
		{"projects/p/locations/l/clusters/c1", "c", eq, false},
		{"/a/Cluster1", "cluster1", eq, false},
		{"/a/Cluster1", "cluster1", strings.EqualFold, true},
	} {
		if got := NamesSegment(c.name, c.res, c.equal); got != c.want {
			t.Errorf("NamesSegment(%q, %q) = %v, want %v", c.name, c.res, got, c.want)
		}
	}
}

type testFault struct {
	Op    string `json:"op"`
	Fired int    `json:"fired"`
}

func validateTestFault(f *testFault) error {
	if f.Op == "" {
		return errors.New("no op")
	}
	return nil
}

func TestDecodeFaults(t *testing.T) {
	for _, c := range []struct {
		in      string
		strict  bool
		want    []string
		wantErr string
	}{
		{`{"op":"a"}`, false, []string{"a"}, ""},
		{` [{"op":"a"},{"op":"b"}] `, true, []string{"a", "b"}, ""},
		{`{"op":"a","extra":1}`, false, []string{"a"}, ""},
		{`{"op":"a","extra":1}`, true, nil, `unknown field "extra"`},
		{`[{"op":""}]`, false, nil, "no op"},
		{`[`, false, nil, "unexpected end"},
	} {
		fs, err := DecodeFaults([]byte(c.in), c.strict, validateTestFault)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s (strict %v): %v, want an error with %q", c.in, c.strict, err, c.wantErr)
			}
			continue
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.Op)
		}
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s (strict %v): %v %v, want %v", c.in, c.strict, got, err, c.want)
		}
	}
}

func TestReadFaultsFile(t *testing.T) {
	dir := t.TempDir()
	decode := func(b []byte) ([]*testFault, error) { return DecodeFaults(b, true, validateTestFault) }
	fs, err := ReadFaultsFile(filepath.Join(dir, "none.json"), decode)
	if err != nil || fs != nil {
		t.Fatalf("missing file: %v %v, want no faults", fs, err)
	}
	path := filepath.Join(dir, "faults.json")
	if err := os.WriteFile(path, []byte(`[{"op":""}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFaultsFile(path, decode); err == nil || err.Error() != path+": no op" {
		t.Fatalf("bad file: %v, want the error naming it", err)
	}
}

func TestFaultsEndpoint(t *testing.T) {
	var mu sync.Mutex
	var list []*testFault
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	e := FaultsEndpoint[testFault]{Name: "nuv test emulator", Mu: &mu, List: &list,
		Decode: func(b []byte) ([]*testFault, error) { return DecodeFaults(b, false, validateTestFault) }, WriteJSON: writeJSON,
		AdminToken: "s3cr3t"}
	srv := httptest.NewServer(e)
	defer srv.Close()
	send := func(req *http.Request) (int, string) {
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, strings.TrimSpace(b.String())
	}
	call := func(method, body string) (int, string) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := NewAdminRequest(context.Background(), method, srv.URL+"/_nuv/faults", "s3cr3t", rd)
		return send(req)
	}
	// Without the admin token, with another one, or with a body that is not JSON (what a web page
	// can post cross-site), nothing is listed or changed.
	for _, c := range []struct {
		name, method, auth, ctype string
		status                    int
		want                      string
	}{
		{"no token", "POST", "", "application/json", 401, "needs the emulator's admin token"},
		{"no token, GET", "GET", "", "", 401, "needs the emulator's admin token"},
		{"other token", "DELETE", "Bearer guess", "", 401, "needs the emulator's admin token"},
		{"form post", "POST", "Bearer s3cr3t", "application/x-www-form-urlencoded", 415, "takes Content-Type: application/json"},
		{"text post", "PUT", "Bearer s3cr3t", "text/plain", 415, "takes Content-Type: application/json"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+"/_nuv/faults", strings.NewReader(`{"op":"evil"}`))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		if status, body := send(req); status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, body, c.status, c.want)
		}
	}
	for _, c := range []struct {
		method, body string
		status       int
		want         string
	}{
		{"GET", "", 200, `[]`},
		{"POST", `{"op":"a"}`, 200, `[{"op":"a","fired":0}]`},
		{"POST", `[{"op":"b"}]`, 200, `[{"op":"a","fired":0},{"op":"b","fired":0}]`},
		{"PUT", `[{"op":"c"}]`, 200, `[{"op":"c","fired":0}]`},
		{"POST", `[{"op":""}]`, 400, `nuv test emulator: faults: no op`},
		{"GET", "", 200, `[{"op":"c","fired":0}]`},
		{"DELETE", "", 200, `[]`},
		{"PATCH", "", 405, `nuv test emulator: /_nuv/faults takes GET, POST, PUT or DELETE`},
	} {
		status, body := call(c.method, c.body)
		if status != c.status || body != c.want {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.body, status, body, c.status, c.want)
		}
	}
	mu.Lock()
	list = []*testFault{{Op: "x", Fired: 2}}
	mu.Unlock()
	if got := e.Snapshot(); len(got) != 1 || got[0] != (testFault{"x", 2}) {
		t.Fatalf("snapshot %+v", got)
	}
}

func TestServeTokenReview(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ServeTokenReview(w, r, "nuv test emulator", func(token string) authv1.TokenReviewStatus {
			if token != "good" {
				return authv1.TokenReviewStatus{Error: "bad token"}
			}
			return authv1.TokenReviewStatus{Authenticated: true, User: authv1.UserInfo{Username: "me"}}
		}, func(w http.ResponseWriter, status int, v any) {
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(v)
		})
	}))
	defer srv.Close()
	review := func(token string) authv1.TokenReview {
		b, _ := json.Marshal(authv1.TokenReview{Spec: authv1.TokenReviewSpec{Token: token}})
		resp, err := srv.Client().Post(srv.URL, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out authv1.TokenReview
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("review answer: %d %v", resp.StatusCode, err)
		}
		return out
	}
	if out := review("good"); !out.Status.Authenticated || out.Status.User.Username != "me" || out.Kind != "TokenReview" || out.APIVersion != "authentication.k8s.io/v1" {
		t.Fatalf("good token: %+v", out)
	}
	if out := review("bad"); out.Status.Authenticated || out.Status.Error != "bad token" {
		t.Fatalf("bad token: %+v", out)
	}
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d, want 405", resp.StatusCode)
	}
	resp, err = srv.Client().Post(srv.URL, "application/json", strings.NewReader("nope"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("not a review: %d, want 400", resp.StatusCode)
	}
	// A form post (what a web page can send cross-site) is not a review; an oversized one is 413.
	b, _ := json.Marshal(authv1.TokenReview{Spec: authv1.TokenReviewSpec{Token: "good"}})
	resp, err = srv.Client().Post(srv.URL, "application/x-www-form-urlencoded", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("form post: %d, want 415", resp.StatusCode)
	}
	resp, err = srv.Client().Post(srv.URL, "application/json", strings.NewReader(`{"spec":{"token":"`+strings.Repeat("a", 2<<20)+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB review: %d, want 413", resp.StatusCode)
	}
}

// TestReadBody: a body up to the limit is read whole; one byte more is a BodyTooLargeError,
// whether the client declared its length or streamed it.
func TestReadBody(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		tooBig  bool
	}{
		{"at the limit", 1024, false, false},
		{"over, declared", 1025, false, true},
		{"over, streamed", 1025, true, true},
		{"empty", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(strings.Repeat("x", tc.size))
			if tc.chunked {
				body = io.MultiReader(body) // no length known up front
			}
			r := httptest.NewRequest(http.MethodPost, "/", body)
			if tc.chunked {
				r.ContentLength = -1
			}
			b, err := ReadBody(r, 1024)
			var tl *BodyTooLargeError
			if tc.tooBig != errors.As(err, &tl) {
				t.Fatalf("ReadBody of %d bytes: %v", tc.size, err)
			}
			if !tc.tooBig && (err != nil || len(b) != tc.size) {
				t.Fatalf("ReadBody of %d bytes: %d bytes, %v", tc.size, len(b), err)
			}
		})
	}
}

type limitedFault struct {
	op                  string
	every, count, fired int
}

func (f *limitedFault) Limits() (every, count int, fired *int) { return f.every, f.count, &f.fired }

func TestHit(t *testing.T) {
	once := &limitedFault{op: "a", count: 1}
	third := &limitedFault{op: "b", every: 3}
	fs := []*limitedFault{once, third}
	on := func(op string) func(*limitedFault) bool { return func(f *limitedFault) bool { return f.op == op } }
	var got []string
	for n := 1; n <= 3; n++ {
		if f := Hit(fs, n, on("a")); f != nil {
			got = append(got, "a")
		}
		if f := Hit(fs, n, on("b")); f != nil {
			got = append(got, "b")
		}
	}
	if strings.Join(got, ",") != "a,b" || once.fired != 1 || third.fired != 1 {
		t.Fatalf("hits %v, fired %d %d; want a once (count 1), b on the third call", got, once.fired, third.fired)
	}
	if f := Hit(fs, 6, on("c")); f != nil {
		t.Fatalf("a fault for another operation hit: %+v", f)
	}
}

// TestRoutesMatch: a route matches its method and pattern ("*" one segment, any case with fold);
// a path served with another method is known; other paths are not.
func TestRoutesMatch(t *testing.T) {
	rs := Routes[int]{
		{"GET", "clusters", "ListClusters", 1},
		{"POST", "clusters", "CreateCluster", 2},
		{"GET", "clusters/*", "DescribeCluster", 3},
		{"GET", "clusters/*/node-groups/*", "DescribeNodegroup", 4},
	}
	for _, tc := range []struct {
		method, path string
		fold         bool
		want         int // 0: no route
		known        bool
	}{
		{"GET", "clusters", false, 1, true},
		{"POST", "clusters", false, 2, true},
		{"GET", "clusters/a", false, 3, true},
		{"DELETE", "clusters/a", false, 0, true},
		{"GET", "clusters/a/node-groups/b", false, 4, true},
		{"GET", "clusters/a/node-groups", false, 0, false},
		{"GET", "Clusters/a", false, 0, false},
		{"GET", "Clusters/A", true, 3, true},
		{"GET", "addons", false, 0, false},
	} {
		r, known := rs.Match(tc.method, strings.Split(tc.path, "/"), tc.fold)
		got := 0
		if r != nil {
			got = r.Handler
		}
		if got != tc.want || known != tc.known {
			t.Errorf("%s %s (fold %v): route %d known %v; want %d %v", tc.method, tc.path, tc.fold, got, known, tc.want, tc.known)
		}
	}
	if got := strings.Join(rs.Ops(), ","); got != "ListClusters,CreateCluster,DescribeCluster,DescribeNodegroup" {
		t.Errorf("Ops: %s", got)
	}
}
