package whiskapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkGetAction reads one action through the API (basic auth, the Redis throttle counter,
// the CouchDB read) and, as its peer in the same run, the same document straight from CouchDB; it
// prints both per-request times and their ratio, the controller's overhead.
func BenchmarkGetAction(b *testing.B) {
	couch := startCouch(b, DefaultDatabase)
	redis := startRedis(b)
	s := New(Config{Namespace: "guest", AuthUser: testUser, AuthKey: testKey, CouchDBURL: couch, Database: DefaultDatabase,
		RedisAddr: redis, RequestsPerMinute: 1 << 30}, nil)
	ts := httptest.NewServer(s)
	defer ts.Close()
	req := func(method, url, body string, auth bool) int {
		r, _ := http.NewRequest(method, url, strings.NewReader(body))
		if auth {
			r.SetBasicAuth(testUser, testKey)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	api := ts.URL + "/api/v1/namespaces/_/actions/bench"
	if c := req("PUT", api, `{"exec":{"kind":"nodejs:20","code":"function main() {}"}}`, true); c != 200 {
		b.Fatalf("put: HTTP %d", c)
	}
	direct := couch.String() + "/" + DefaultDatabase + "/guest%2Fbench"
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if c := req("GET", api, "", true); c != 200 {
			b.Fatalf("get: HTTP %d", c)
		}
	}
	apiNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	start = time.Now()
	for range b.N {
		if c := req("GET", direct, "", false); c != 200 {
			b.Fatalf("couchdb get: HTTP %d", c)
		}
	}
	couchNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.StopTimer()
	b.ReportMetric(apiNs/1e3, "µs/api-get")
	b.ReportMetric(couchNs/1e3, "µs/couchdb-get")
	b.ReportMetric(apiNs/couchNs, "api/couchdb")
}
