// Package reporttest looks at nuv's HTML reports the way a person sees them: headless Chromium
// (Debian's chromium, installed by hack/test.sh) renders a page, a test reads the rendered DOM and
// computed styles over the DevTools protocol, dispatches real mouse events and keeps screenshots
// in $NUV_TEST_ARTIFACTS (else in the test's temporary directory).
package reporttest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Chromium is one headless browser and a DevTools connection to its page.
type Chromium struct {
	t    *testing.T
	cmd  *exec.Cmd
	conn *websocket.Conn
	id   int
}

func StartChromium(t *testing.T, url string) *Chromium {
	t.Helper()
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (hack/test.sh installs Debian's chromium): %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-size=1400,900", "--hide-scrollbars", url)
	// Chromium's helper processes (zygote, renderers, utility) outlive its main process and keep
	// writing to the profile: run it in a process group of its own and end the whole group, so
	// that nothing writes into the user-data-dir while the test removes it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`DevTools listening on ws://127\.0\.0\.1:(\d+)/`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
			}
		}
	}()
	var p string
	select {
	case p = <-port:
	case <-time.After(60 * time.Second):
		t.Fatal("chromium did not open its DevTools port within 60s")
	}
	// The page target of the URL given on the command line.
	var ws string
	for deadline := time.Now().Add(30 * time.Second); ws == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://127.0.0.1:" + p + "/json/list")
		if err != nil {
			continue
		}
		var targets []struct{ Type, URL, WebSocketDebuggerURL string }
		json.NewDecoder(resp.Body).Decode(&targets)
		resp.Body.Close()
		for _, tg := range targets {
			if tg.Type == "page" && tg.URL == url {
				ws = tg.WebSocketDebuggerURL
			}
		}
	}
	if ws == "" {
		t.Fatal("no page target for " + url)
	}
	conn, _, err := websocket.DefaultDialer.Dial(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &Chromium{t: t, cmd: cmd, conn: conn}
}

// Call sends one DevTools command and returns its result (events are skipped).
func (c *Chromium) Call(method string, params any, result any) {
	c.t.Helper()
	if msg := c.call(method, params, result); msg != "" {
		c.t.Fatalf("%s: %s", method, msg)
	}
}

// call is Call that returns the browser's error message ("" when it answered) instead of failing
// the test on it; a broken connection still fails the test.
func (c *Chromium) call(method string, params any, result any) string {
	c.t.Helper()
	c.id++
	if err := c.conn.WriteJSON(map[string]any{"id": c.id, "method": method, "params": params}); err != nil {
		c.t.Fatal(err)
	}
	c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Message string }
		}
		if err := c.conn.ReadJSON(&msg); err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		if msg.ID != c.id {
			continue
		}
		if msg.Error != nil {
			return msg.Error.Message
		}
		if result != nil {
			if err := json.Unmarshal(msg.Result, result); err != nil {
				c.t.Fatalf("%s: %v", method, err)
			}
		}
		return ""
	}
}

// Eval evaluates a JavaScript expression in the page and decodes its (JSON-able) value into out.
func (c *Chromium) Eval(expr string, out any) {
	c.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	c.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		c.t.Fatalf("evaluate %s: %s", expr, r.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		c.t.Fatalf("evaluate %s: %v (%s)", expr, err, r.Result.Value)
	}
}

// WaitFor waits (up to 30s) until the JavaScript expression is true in the page. A page that is
// navigating (what a wait after a click is usually for) has no context to evaluate in for a
// moment: the browser's "Inspected target navigated or closed" and its kin mean "not yet".
func (c *Chromium) WaitFor(expr string) {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var r struct {
			Result           struct{ Value json.RawMessage }
			ExceptionDetails *struct{ Text string }
		}
		msg := c.call("Runtime.evaluate", map[string]any{"expression": "!!(" + expr + ")", "returnByValue": true, "awaitPromise": true}, &r)
		if msg != "" {
			if navigating(msg) {
				continue
			}
			c.t.Fatalf("Runtime.evaluate: %s", msg)
		}
		if r.ExceptionDetails != nil {
			c.t.Fatalf("evaluate %s: %s", expr, r.ExceptionDetails.Text)
		}
		if string(r.Result.Value) == "true" {
			return
		}
	}
	c.t.Fatalf("page never satisfied %s", expr)
}

// navigating says whether a DevTools error means the page was between documents.
func navigating(msg string) bool {
	for _, s := range []string{"navigated or closed", "Execution context was destroyed", "Cannot find context with specified id"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Screenshot captures the whole page as PNG into $NUV_TEST_ARTIFACTS/name (else the test's
// temporary directory) and returns the file's path.
func (c *Chromium) Screenshot(name string) string {
	c.t.Helper()
	var shot struct{ Data string }
	c.Call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 1000 {
		c.t.Fatalf("screenshot: %v (%d bytes)", err, len(png))
	}
	out := os.Getenv("NUV_TEST_ARTIFACTS")
	if out == "" {
		out = c.t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		c.t.Fatal(err)
	}
	path := filepath.Join(out, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.t.Logf("screenshot of the report: %s", path)
	return path
}
