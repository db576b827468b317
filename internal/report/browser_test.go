package report

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

// The HTML report is checked the way a person sees it: headless Chromium (Debian's chromium,
// installed by hack/test.sh) renders index.html of a failing matrix, the test reads the rendered
// DOM and computed styles over the DevTools protocol, clicks a failed cell with a real mouse event
// and keeps a screenshot ($NUV_TEST_ARTIFACTS/report.png, else in the test's temporary directory).

// chromium is one headless browser and a DevTools connection to its page.
type chromium struct {
	t    *testing.T
	cmd  *exec.Cmd
	conn *websocket.Conn
	id   int
}

func startChromium(t *testing.T, url string) *chromium {
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
	return &chromium{t: t, cmd: cmd, conn: conn}
}

// call sends one DevTools command and returns its result (events are skipped).
func (c *chromium) call(method string, params any, result any) {
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
			c.t.Fatalf("%s: %s", method, msg.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(msg.Result, result); err != nil {
				c.t.Fatalf("%s: %v", method, err)
			}
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and decodes its (JSON-able) value into out.
func (c *chromium) eval(expr string, out any) {
	c.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		c.t.Fatalf("evaluate %s: %s", expr, r.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		c.t.Fatalf("evaluate %s: %v (%s)", expr, err, r.Result.Value)
	}
}

func (c *chromium) waitFor(expr string) {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var ok bool
		c.eval("!!("+expr+")", &ok)
		if ok {
			return
		}
	}
	c.t.Fatalf("page never satisfied %s", expr)
}

// renderedCell is what the page shows for one cell of the grid.
type renderedCell struct {
	Cluster, Target, Step, Status, Background, Text, Open string
	Bar, Track                                            float64
}

const readGrid = `(() => {
  const cells = [...document.querySelectorAll('#grid td.cell')].map(td => {
    const bar = td.querySelector('.bar span'), track = td.querySelector('.bar'), open = td.querySelector('a.open');
    return {Cluster: td.parentElement.dataset.cluster, Target: td.dataset.target, Step: td.dataset.step,
      Status: td.dataset.status, Background: getComputedStyle(td).backgroundColor, Text: td.innerText,
      Open: open ? open.href : '', Bar: bar ? bar.getBoundingClientRect().width : 0,
      Track: track ? track.getBoundingClientRect().width : 0};
  });
  const rows = [...document.querySelectorAll('#grid tr[data-cluster]')].map(tr => {
    const th = tr.querySelector('th.cluster'), badge = th.querySelector('.badge');
    return {cluster: tr.dataset.cluster, badge: badge && badge.offsetWidth > 0 ? badge.innerText : '',
      stripes: getComputedStyle(th).backgroundImage.includes('repeating-linear-gradient'), meta: th.innerText};
  });
  return {cells, rows, summary: document.querySelector('#summary').innerText};
})()`

func TestIntegrationHTMLReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	dir := t.TempDir()
	r := sample()
	// A failing matrix with its artifacts and logs on disk, as all-kubes leaves it.
	for _, res := range r.Results {
		os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
		os.WriteFile(filepath.Join(dir, res.Log), []byte("log of "+res.Cluster+"\n"), 0o644)
		if res.Artifacts != "" {
			os.MkdirAll(filepath.Join(dir, res.Artifacts), 0o755)
			os.WriteFile(filepath.Join(dir, res.Artifacts, "events.txt"), []byte("events"), 0o644)
		}
	}
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(dir, HTMLFile)
	c := startChromium(t, url)
	c.waitFor(`document.readyState === 'complete' && document.querySelector('#grid')`)

	var page struct {
		Cells []renderedCell
		Rows  []struct {
			Cluster, Badge, Meta string
			Stripes              bool
		}
		Summary string
	}
	c.eval(readGrid, &page)
	cells := map[string]renderedCell{}
	for _, x := range page.Cells {
		cells[x.Cluster+"/"+x.Step] = x
	}
	colours := map[string]string{
		"passed": "rgb(45, 164, 78)", "failed": "rgb(207, 34, 46)", "flaky": "rgb(227, 160, 8)",
		"timeout": "rgb(188, 76, 0)", "unreachable": "rgb(87, 96, 106)", "none": "rgb(246, 248, 250)",
	}
	for _, tc := range []struct {
		key, status string
		bar         float64 // expected bar width relative to the track (slowest cell = 1)
		open        string  // where one click on the cell goes
	}{
		{"gke1/", "failed", 8.5 / 30, "/artifacts/gke1/"},
		{"gke1/whisk-redis", "failed", 8.0 / 30, "/artifacts/gke1/"},
		{"gke1/crd-validation", "passed", 0.4 / 30, ""},
		{"eks1/", "passed", 6.25 / 30, ""},
		{"flaky/", "flaky", 3.0 / 30, ""},
		{"slow<&>/", "timeout", 1, "/logs/slow.log"},
		{"down/", "unreachable", 2.0 / 30, "/logs/down.log"},
		{"down/whisk-redis", "none", 0, ""},
	} {
		x, ok := cells[tc.key]
		if !ok {
			t.Errorf("no rendered cell %s", tc.key)
			continue
		}
		if x.Status != tc.status || x.Background != colours[tc.status] {
			t.Errorf("%s: status %s colour %s, want %s %s", tc.key, x.Status, x.Background, tc.status, colours[tc.status])
		}
		if tc.status != "none" {
			if x.Track <= 0 || abs(x.Bar/x.Track-tc.bar) > 0.03 && x.Bar > 2.5 {
				t.Errorf("%s: duration bar %.1f of %.1f px, want %.2f of the track", tc.key, x.Bar, x.Track, tc.bar)
			}
		}
		if tc.open == "" && x.Open != "" || tc.open != "" && !strings.HasSuffix(x.Open, tc.open) {
			t.Errorf("%s: the cell opens %q, want …%s", tc.key, x.Open, tc.open)
		}
	}
	simulated := map[string]bool{}
	for _, row := range page.Rows {
		simulated[row.Cluster] = row.Badge == "simulated" && row.Stripes
	}
	if !simulated["eks1"] || !simulated["flaky"] || simulated["gke1"] {
		t.Errorf("simulated rows marked: %v", simulated)
	}
	for _, row := range page.Rows {
		if row.Cluster == "eks1" && (!strings.Contains(row.Meta, "type eks by providerID") || !strings.Contains(row.Meta, "local/eks, 3 simulated nodes")) {
			t.Errorf("eks1 row header: %q", row.Meta)
		}
	}
	if !strings.Contains(page.Summary, "1 failed") || !strings.Contains(page.Summary, "1 flaky") {
		t.Errorf("summary: %q", page.Summary)
	}

	// The screenshot a person would see.
	var shot struct{ Data string }
	c.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 1000 {
		t.Fatalf("screenshot: %v (%d bytes)", err, len(png))
	}
	out := os.Getenv("NUV_TEST_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	os.MkdirAll(out, 0o755)
	shotPath := filepath.Join(out, "report-failing-matrix.png")
	if err := os.WriteFile(shotPath, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the report: %s", shotPath)

	// One click on the failed cell opens its artifacts.
	var box struct{ X, Y float64 }
	c.eval(`(() => { const a = document.querySelector('#grid tr[data-cluster="gke1"] td.cell[data-step=""] a.open');
	  a.scrollIntoView(); const r = a.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`, &box)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		c.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": box.X, "y": box.Y, "button": "left", "clickCount": 1}, nil)
	}
	c.waitFor(`location.href.endsWith('/artifacts/gke1/') && document.body && document.body.innerText.includes('events.txt')`)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
