package emucore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// kstate and kfault are a toy emulator's state and fault, to drive the kernel alone.
type kstate struct {
	Secret string `json:"secret"`
	Addr   string `json:"addr,omitempty"`
	Ticks  int    `json:"ticks"`
}

type kfault struct {
	Op string `json:"op"`
	FaultLimits
}

func kspec(dir string, made *int, ticks *atomic.Int32) Spec[kstate, kfault] {
	return Spec[kstate, kfault]{
		Name: "nuv toy emulator", What: "toy emulator", Dir: dir,
		State: StateSpec[kstate]{
			New: func() (*kstate, error) { *made++; return &kstate{Secret: "s3cret"}, nil },
			Check: func(path string, st *kstate) error {
				if st.Secret == "" {
					return errors.New("toy emulator state " + path + " is incomplete")
				}
				return nil
			},
		},
		SetAddr: func(st *kstate, addr string) { st.Addr = addr },
		Reconcile: func(time.Time) bool {
			ticks.Add(1)
			return false
		},
		Health: func(st *kstate) any { return map[string]string{"addr": st.Addr} },
		DecodeFaults: func(b []byte) ([]*kfault, error) {
			return DecodeFaults(b, true, func(f *kfault) error { return f.Check(f.Op) })
		},
		WriteJSON: func(w http.ResponseWriter, status int, v any) { WriteJSON(w, status, "application/json", v) },
	}
}

// TestKernelLifecycle: a new kernel makes and saves its state (0600) and admin token; Start
// records the address and runs the reconcile loop; Close saves; a second kernel on the directory
// loads the state instead of making one; a corrupt or incomplete state is refused naming its file.
func TestKernelLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "toy")
	made := 0
	var ticks atomic.Int32
	k, err := NewKernel(kspec(dir, &made, &ticks))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{StateFile, AdminTokenFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v; want a 0600 file", f, fi, err)
		}
	}
	if err := k.Start("127.0.0.1:1234"); err != nil {
		t.Fatal(err)
	}
	if k.BaseURL() != "http://127.0.0.1:1234" {
		t.Fatalf("base %q", k.BaseURL())
	}
	for deadline := time.Now().Add(5 * time.Second); ticks.Load() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reconcile loop does not run")
		}
	}
	k.Mu.Lock()
	k.St.Ticks = 7
	k.Mu.Unlock()
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	k2, err := NewKernel(kspec(dir, &made, &ticks))
	if err != nil {
		t.Fatal(err)
	}
	if made != 1 || k2.St.Secret != "s3cret" || k2.St.Addr != "127.0.0.1:1234" || k2.St.Ticks != 7 || k2.AdminToken != k.AdminToken {
		t.Fatalf("reopened: made %d times, state %+v", made, *k2.St)
	}

	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"secret":""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewKernel(kspec(dir, &made, &ticks)); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, StateFile)) {
		t.Fatalf("incomplete state: %v", err)
	}
	if _, err := NewKernel(kspec("", &made, &ticks)); err == nil || err.Error() != "toy emulator: no state directory" {
		t.Fatalf("no directory: %v", err)
	}
}

// TestKernelFaultsAndAdmin: faults.json is read at start; HitFault counts calls per operation and
// fires by the limits; the admin endpoints answer health and the faults (with their counts) to
// the admin token only, and name the endpoints they have for any other path.
func TestKernelFaultsAndAdmin(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "faults.json"), []byte(`[{"op":"Create","every":2}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	made := 0
	var ticks atomic.Int32
	k, err := NewKernel(kspec(dir, &made, &ticks))
	if err != nil {
		t.Fatal(err)
	}
	on := func(op string) func(*kfault) bool { return func(f *kfault) bool { return f.Op == op } }
	var hits []bool
	k.Mu.Lock()
	for i := 0; i < 4; i++ {
		hits = append(hits, k.HitFault("Create", on("Create")) != nil)
	}
	other := k.HitFault("Delete", on("Delete"))
	k.Mu.Unlock()
	if got := fmt.Sprint(hits); got != "[false true false true]" || other != nil {
		t.Fatalf("hits %s (every 2nd Create), Delete %v", got, other)
	}
	if k.Calls["Create"] != 4 || k.Calls["Delete"] != 1 || k.FaultList()[0].Fired != 2 {
		t.Fatalf("calls %v, faults %+v", k.Calls, k.FaultList())
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.ServeAdmin(w, r, "toy/token-review/", func(w http.ResponseWriter, r *http.Request, name string) {
			k.spec.WriteJSON(w, 200, map[string]string{"reviewed": name})
		})
	}))
	defer srv.Close()
	get := func(path, token string) (int, string) {
		req, err := NewAdminRequest(context.Background(), http.MethodGet, srv.URL+path, token, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		path, token string
		status      int
		has         string
	}{
		{"/_nuv/health", "", 200, `"addr"`},
		{"/_nuv/faults", "", 401, "admin token"},
		{"/_nuv/faults", k.AdminToken, 200, `"fired": 2`},
		{"/_nuv/toy/token-review/cp1", "", 200, `"reviewed": "cp1"`},
		{"/_nuv/other", "", 404, "nuv toy emulator: no admin endpoint /_nuv/other (health, faults, toy/token-review/<cluster>)"},
	} {
		if status, body := get(tc.path, tc.token); status != tc.status || !strings.Contains(body, tc.has) {
			t.Errorf("GET %s: %d %s; want %d with %q", tc.path, status, body, tc.status, tc.has)
		}
	}
}

// TestKernelServe: Serve starts the kernel on the listener's address, serves the handler, and
// closes (saves) when the context ends.
func TestKernelServe(t *testing.T) {
	dir := t.TempDir()
	made := 0
	var ticks atomic.Int32
	k, err := NewKernel(kspec(dir, &made, &ticks))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- k.Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { k.ServeAdmin(w, r, "", nil) }), nil)
	}()
	var resp *http.Response
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get("http://" + ln.Addr().String() + "/_nuv/health"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := StateSpec[kstate]{What: "toy emulator"}.Load(dir)
	if err != nil || st.Addr != ln.Addr().String() {
		t.Fatalf("saved state %+v, %v; want the address served on", st, err)
	}
}
