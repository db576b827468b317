package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func TestSetFlattenRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", FileName)
	var out bytes.Buffer
	opts := ToolOptions{Path: path, Out: &out}
	steps := [][]string{
		{"KUBE_NODES=3", "kube_flavor=eks", "DEBUG=true", "LIST=[1,\"a\"]", "NAME=plain text"},
		{"-d", "DEBUG"},
	}
	for _, s := range steps {
		if err := Tool(opts, s); err != nil {
			t.Fatalf("-config %v: %v", s, err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config.json mode = %v, want 0600", st.Mode().Perm())
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got := Env(cfg)
	want := []string{`KUBE_FLAVOR=eks`, `KUBE_NODES=3`, `LIST=[1,"a"]`, `NAME=plain text`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
	if err := Tool(opts, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != strings.Join(want, "\n")+"\n" {
		t.Errorf("listing = %q", out.String())
	}
	if err := Tool(opts, []string{"-r"}); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := Load(path); len(cfg) != 0 {
		t.Errorf("after reset config = %v", cfg)
	}
}

func TestMergeLayers(t *testing.T) {
	defaults := map[string]any{"kube": map[string]any{"nodes": 1, "flavor": "local"}, "registry": "r0"}
	plugin := map[string]any{"kube": map[string]any{"nodes": 2}, "plugin": map[string]any{"x": true}}
	user := map[string]any{"kube": map[string]any{"nodes": 3}, "registry": "r1"}
	got := Flatten(Merge(defaults, plugin, user))
	want := map[string]string{"KUBE_NODES": "3", "KUBE_FLAVOR": "local", "REGISTRY": "r1", "PLUGIN_X": "true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged = %v, want %v", got, want)
	}
	if defaults["kube"].(map[string]any)["nodes"] != 1 {
		t.Error("Merge modified its input")
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	broken := "{\n  \"a\": 1,\n  \"b\": tru\n}\n"
	if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := ToolOptions{Path: path, Out: &bytes.Buffer{}}
	err := Tool(opts, []string{"C=1"})
	if err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Fatalf("set on malformed config: err = %v, want path:line", err)
	}
	if data, _ := os.ReadFile(path); string(data) != broken {
		t.Error("malformed config was rewritten")
	}

	tests := []struct {
		args  []string
		usage bool
		msg   string
	}{
		{[]string{"NOEQUALS"}, true, "not KEY=VALUE"},
		{[]string{"A__B=1"}, true, "invalid config key"},
		{[]string{"-d"}, true, "needs at least one KEY"},
		{[]string{"--bogus"}, true, "unknown flag"},
	}
	good := filepath.Join(dir, "good.json")
	for _, tc := range tests {
		err := Tool(ToolOptions{Path: good, Out: &bytes.Buffer{}}, tc.args)
		var ue *cli.UsageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("-config %v: err = %v, want usage error containing %q", tc.args, err, tc.msg)
		}
	}
	if _, err := os.Stat(good); !errors.Is(err, os.ErrNotExist) {
		t.Error("bad input wrote a config file")
	}
}

func TestSetConflicts(t *testing.T) {
	cfg := map[string]any{}
	if err := Set(cfg, "A", ParseValue("1")); err != nil {
		t.Fatal(err)
	}
	if err := Set(cfg, "A_B", "x"); err == nil || !strings.Contains(err.Error(), "already holds a value") {
		t.Errorf("A_B over A=1: err = %v", err)
	}
	if err := Set(cfg, "C_D", "x"); err != nil {
		t.Fatal(err)
	}
	if err := Set(cfg, "C", "y"); err == nil || !strings.Contains(err.Error(), "nested keys") {
		t.Errorf("C over C_D: err = %v", err)
	}
}

func TestUnwritableHome(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, FileName)
	err := Tool(ToolOptions{Path: path, Out: &bytes.Buffer{}}, []string{"A=1"})
	if err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("err = %v, want one naming %s", err, blocker)
	}
}

func TestSecrets(t *testing.T) {
	tests := []struct {
		cfg  map[string]any
		want []string
	}{
		{map[string]any{"secrets": []any{"my_api", "Other"}}, []string{"MY_API", "OTHER"}},
		{map[string]any{"secrets": "a, b"}, []string{"A", "B"}},
		{map[string]any{}, nil},
	}
	for _, tc := range tests {
		got := Secrets(tc.cfg)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Secrets(%v) = %v, want %v", tc.cfg, got, tc.want)
		}
	}
}
