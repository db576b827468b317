package registrycmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/golden"
	"github.com/nuv-dev/nuv/internal/registry/relayctl"

	"github.com/nuv-dev/nuv/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestStatusForms pins every -o form of `nuv registry status` with a golden file each, for a
// running registry with its kind relay and for a stopped one.
func TestStatusForms(t *testing.T) {
	running := Status{Running: true, Host: "localhost:5001", Addr: "127.0.0.1:5001", PID: 4242, Storage: "/home/dev/.nuv/registry",
		Socket: "/home/dev/.nuv/registry/registry.sock",
		Relay:  &relayctl.Relay{Name: "nuv-registry-relay-1a2b3c", Running: true, Runtime: "docker", Networks: []string{"kind"}}}
	stopped := Status{}
	for _, format := range cli.ListFormats {
		for name, st := range map[string]Status{"running": running, "stopped": stopped} {
			var b bytes.Buffer
			if err := writeStatus(&b, &cli.OutputOption{Format: format}, st); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "status-"+name+"."+format), b.String(), *update)
		}
	}
}

// TestStatusMachineFormWhenStopped runs `nuv registry status -o json` against a home without a
// registry: the machine form says so, and the exit code is 1 as in the table form.
func TestStatusMachineFormWhenStopped(t *testing.T) {
	home := t.TempDir()
	var out, errb bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &errb}, Log: cli.Quiet(), Dir: home,
		Getenv: func(k string) string {
			if k == "NUV_HOME" {
				return home
			}
			return ""
		}}
	err := NewCommand().Run(context.Background(), env, []string{"status", "-o", "json"})
	if cli.ExitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1", cli.ExitCode(err), err)
	}
	var st map[string]any
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st["running"] != false {
		t.Fatalf("stdout %q (%v): want {\"running\": false}", out.String(), err)
	}
	err = NewCommand().Run(context.Background(), env, []string{"status", "-o", "xml"})
	if cli.ExitCode(err) != 2 || err == nil || !bytes.Contains([]byte(err.Error()), []byte(`--output "xml": accepted values: table, wide, json, yaml`)) {
		t.Fatalf("-o xml: exit %d, %v", cli.ExitCode(err), err)
	}
}
