package whiskapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/image/imagetest"
	"github.com/nuv-dev/nuv/operator/controller"
)

// TestInitJobLocksCouchDB runs the operator's CouchDB init script (what its Job runs) against a
// real pouchdb-server, the server of nuv's whisk-couchdb image, started without an admin: after
// it, an anonymous client (another pod) can neither write an action into the Whisk's database nor
// read it, a wrong password is refused, and whisk-controller's client with the store Secret's
// credentials works. Run twice, the script changes nothing (a Job that is retried).
func TestInitJobLocksCouchDB(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl is not installed (the init Job's image has it): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (apt-get install nodejs npm): %v", err)
	}
	port := imagetest.FreePort(t)
	cmd := exec.Command(node, pouchdbServer(t), "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--in-memory")
	cmd.Dir = t.TempDir()
	startProcess(t, cmd)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	const user, pass = controller.CouchDBAdmin, "Adm1nPassw0rdAdm1nPassw0rdAdm1nP"
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		run := exec.CommandContext(ctx, sh, "-c", controller.InitScript(base))
		run.Env = append(os.Environ(), "COUCHDB_USER="+user, "COUCHDB_PASSWORD="+pass)
		out, err := run.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("init script (run %d): %v\n%s", i+1, err, out)
		}
		if strings.Contains(string(out), pass) {
			t.Fatalf("the init script printed the password:\n%s", out)
		}
	}
	call := func(method, path, userinfo, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if userinfo != "" {
			u, p, _ := strings.Cut(userinfo, ":")
			req.SetBasicAuth(u, p)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name, method, path, auth string
	}{
		{"anonymous action write", "PUT", "/whisks/guest%2Fevil", ""},
		{"anonymous read", "GET", "/whisks/_all_docs", ""},
		{"wrong password", "PUT", "/whisks/guest%2Fevil", user + ":guess"},
		{"anonymous security change", "PUT", "/whisks/_security", ""},
	} {
		if code := call(tc.method, tc.path, tc.auth, `{"exec":{"kind":"nodejs:default","code":"evil"}}`); code != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", tc.name, code)
		}
	}
	u, _ := url.Parse(base)
	u.User = url.UserPassword(user, pass)
	c := newCouchClient(u, "whisks")
	ctx := context.Background()
	if _, err := c.put(ctx, "guest/hello", "", map[string]string{"kind": "action"}); err != nil {
		t.Fatalf("the controller's client with the store credentials: %v", err)
	}
	if _, err := c.get(ctx, "guest/evil", &map[string]any{}); err == nil {
		t.Fatal("the anonymous write landed")
	}
}
