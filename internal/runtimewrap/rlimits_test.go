package runtimewrap

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestClamp: limits above the hard limits are lowered (soft too), the others and the rest of the
// spec kept; a process file (exec --process) has its rlimits at the top.
func TestClamp(t *testing.T) {
	hard := map[string]uint64{"RLIMIT_NOFILE": 20000, "RLIMIT_NPROC": 32768}
	for _, tc := range []struct {
		name, in, want string
		notes          []string
	}{
		{"podman's rootful defaults",
			`{"process":{"args":["/sbin/init"],"rlimits":[{"type":"RLIMIT_NOFILE","hard":1048576,"soft":1048576},{"type":"RLIMIT_NPROC","hard":4194304,"soft":4194304}]}}`,
			`{"process":{"args":["/sbin/init"],"rlimits":[{"hard":20000,"soft":20000,"type":"RLIMIT_NOFILE"},{"hard":32768,"soft":32768,"type":"RLIMIT_NPROC"}]}}`,
			[]string{"RLIMIT_NOFILE 1048576 -> 20000", "RLIMIT_NPROC 4194304 -> 32768"}},
		{"unlimited hard, low soft",
			`{"process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1024}]}}`,
			`{"process":{"rlimits":[{"hard":20000,"soft":1024,"type":"RLIMIT_NOFILE"}]}}`,
			[]string{"RLIMIT_NOFILE 18446744073709551615 -> 20000"}},
		{"within the limits: unchanged",
			`{"process": {"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 20000, "soft": 1024}, {"type": "RLIMIT_CORE", "hard": 99999999, "soft": 0}]}}`,
			`{"process": {"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 20000, "soft": 1024}, {"type": "RLIMIT_CORE", "hard": 99999999, "soft": 0}]}}`,
			nil},
		{"exec process file",
			`{"args":["sh"],"rlimits":[{"type":"RLIMIT_NPROC","hard":40000,"soft":40000}]}`,
			`{"args":["sh"],"rlimits":[{"hard":32768,"soft":32768,"type":"RLIMIT_NPROC"}]}`,
			[]string{"RLIMIT_NPROC 40000 -> 32768"}},
		{"no rlimits", `{"process":{"args":["x"]}}`, `{"process":{"args":["x"]}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, notes, err := Clamp([]byte(tc.in), hard)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got  %s\nwant %s", out, tc.want)
			}
			if !reflect.DeepEqual(notes, tc.notes) {
				t.Errorf("notes %q, want %q", notes, tc.notes)
			}
		})
	}
}

func TestClampRefusesGarbage(t *testing.T) {
	for _, in := range []string{`{not json`, `{"process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":"lots","soft":1}]}}`} {
		if _, _, err := Clamp([]byte(in), map[string]uint64{"RLIMIT_NOFILE": 1}); err == nil {
			t.Errorf("Clamp accepted %s", in)
		}
	}
}

// TestRewriteLimits edits a bundle's config.json in place with this process's own hard limits.
func TestRewriteLimits(t *testing.T) {
	hard, err := HostHardLimits()
	if err != nil {
		t.Fatal(err)
	}
	if len(hard) != len(rlimitNames) || hard["RLIMIT_NOFILE"] == 0 {
		t.Fatalf("HostHardLimits = %v", hard)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	over := hard["RLIMIT_NOFILE"] + 1
	in := `{"process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":` + itoa(over) + `,"soft":` + itoa(over) + `}]}}`
	if err := os.WriteFile(cfg, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	notes, err := RewriteLimits([]string{"--log", "/l", "create", "--bundle", dir, "id"}, "/", hard)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "RLIMIT_NOFILE ") {
		t.Fatalf("notes %q", notes)
	}
	got, _ := os.ReadFile(cfg)
	if want := `"hard":` + itoa(hard["RLIMIT_NOFILE"]) + `,`; !strings.Contains(string(got), want) {
		t.Errorf("config.json %s lacks %s", got, want)
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the original 0600", st.Mode().Perm())
	}
	if notes, err := RewriteLimits([]string{"state", "id"}, dir, hard); err != nil || notes != nil {
		t.Errorf("state: %q %v", notes, err)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
