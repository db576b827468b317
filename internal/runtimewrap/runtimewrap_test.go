package runtimewrap

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		name, bnd string
		last      int
		want      []string
	}{
		{"this VM", "000001fffeffffff", 40, []string{"CAP_SYS_RESOURCE"}},
		{"full set", "000001ffffffffff", 40, nil},
		{"older kernel, full", "0000003fffffffff", 37, nil},
		{"two missing", "000001fffefffffe", 40, []string{"CAP_CHOWN", "CAP_SYS_RESOURCE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Missing(tc.bnd, tc.last)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Missing(%s, %d) = %v, want %v", tc.bnd, tc.last, got, tc.want)
			}
		})
	}
	if _, err := Missing("zz", 40); err == nil {
		t.Fatal("Missing accepted a bounding set that is not hexadecimal")
	}
}

func TestSpecFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"create as containerd runs it", []string{"--root", "/run/r", "--log", "/b/log.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "/b/init.pid", "id"}, "/b/config.json"},
		{"run short flag", []string{"run", "-b", "/x", "id"}, "/x/config.json"},
		{"run with = and a relative bundle", []string{"--systemd-cgroup", "run", "--bundle=rel", "id"}, "/cwd/rel/config.json"},
		{"create in the bundle", []string{"create", "id"}, "/cwd/config.json"},
		{"exec process file", []string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "/tmp/p.json"},
		{"exec -p", []string{"exec", "-p", "p.json", "id"}, "/cwd/p.json"},
		{"exec without a process file", []string{"exec", "id", "ls"}, ""},
		{"other commands pass", []string{"--root", "/r", "delete", "--force", "id"}, ""},
		{"state", []string{"state", "id"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SpecFile(tc.args, "/cwd"); got != tc.want {
				t.Fatalf("SpecFile(%q) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}

func TestDropGolden(t *testing.T) {
	for _, tc := range []struct {
		in, golden string
		want       []string
	}{
		{"config.json", "config.golden.json", []string{"CAP_SYS_RESOURCE"}},
		{"process.json", "process.golden.json", []string{"CAP_SYS_RESOURCE"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tc.in))
			if err != nil {
				t.Fatal(err)
			}
			out, removed, err := Drop(in, []string{"CAP_SYS_RESOURCE"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(removed, tc.want) {
				t.Fatalf("removed %v, want %v", removed, tc.want)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(append(out, '\n')) != string(want) {
				t.Fatalf("Drop(%s) =\n%s\nwant (%s)\n%s", tc.in, out, golden, want)
			}
			// dropping again changes nothing and returns the input itself
			again, removed, err := Drop(out, []string{"CAP_SYS_RESOURCE"})
			if err != nil || removed != nil || string(again) != string(out) {
				t.Fatalf("second Drop: removed %v, err %v, changed %v", removed, err, string(again) != string(out))
			}
		})
	}
}

func TestDropRefusesGarbage(t *testing.T) {
	if _, _, err := Drop([]byte("{not json"), []string{"CAP_SYS_RESOURCE"}); err == nil {
		t.Fatal("Drop accepted a spec that is not JSON")
	}
}

func TestRewriteInPlace(t *testing.T) {
	dir := t.TempDir()
	in, err := os.ReadFile("testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, in, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := Rewrite([]string{"--root", "/r", "create", "--bundle", dir, "id"}, "/", []string{"CAP_SYS_RESOURCE"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(removed, []string{"CAP_SYS_RESOURCE"}) {
		t.Fatalf("removed %v", removed)
	}
	got, _ := os.ReadFile(cfg)
	want, _ := os.ReadFile("testdata/config.golden.json")
	if string(got)+"\n" != string(want) {
		t.Fatalf("config.json after Rewrite:\n%s", got)
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want the original 0600", st.Mode().Perm())
	}
	if _, err := Rewrite([]string{"create", "--bundle", filepath.Join(dir, "missing"), "id"}, "/", []string{"CAP_SYS_RESOURCE"}); err == nil {
		t.Fatal("Rewrite of a bundle without config.json succeeded")
	}
}
