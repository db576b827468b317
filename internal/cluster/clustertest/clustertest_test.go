package clustertest

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

const asNuv = "NUV_CLUSTERTEST_AS_NUV"

func TestMain(m *testing.M) { ActAsNuv(m, asNuv) }

// TestCommandOutput runs the test binary as nuv: real nuv command lines, their output and exit.
func TestCommandOutput(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       []string
		args      []string
		code      int
		out, errs string // substrings of stdout and stderr
	}{
		{"version", []string{"NUV_CLUSTER=x"}, []string{"-version"}, 0, ".", ""},
		{"unknown cluster subcommand", nil, []string{"cluster", "no-such-subcommand"}, 2, "", "no-such-subcommand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := Command(asNuv, tc.env, tc.args...)
			if got := cmd.Env[len(cmd.Env)-len(tc.env):]; strings.Join(got, " ") != strings.Join(tc.env, " ") {
				t.Errorf("env ends with %v, want %v", got, tc.env)
			}
			out, errs, code := Output(t, cmd)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errs) {
				t.Errorf("nuv %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, out, errs)
			}
		})
	}
}

func TestServe(t *testing.T) {
	var addr string
	t.Run("serves until the test ends", func(t *testing.T) {
		addr = Serve(t, func(ctx context.Context, ln net.Listener) error {
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })}
			go func() { <-ctx.Done(); srv.Close() }()
			return srv.Serve(ln) // http.ErrServerClosed once stopped: not a failure
		})
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("addr %s is not on loopback", addr)
		}
		resp, err := http.Get("http://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello" {
			t.Errorf("served %q", b)
		}
	})
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("%s still accepts after the test that served it ended", addr)
	}
}
