package version

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestFromInfo(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/nuv-dev/nuv", Version: "v1.2.0"}, Settings: []debug.BuildSetting{
		{Key: "-ldflags", Value: "-s -w -X " + Var + "=1.2.0 -X " + CommitVar + "=abc"},
		{Key: "vcs.revision", Value: "abcdef0123456789"},
		{Key: "vcs.modified", Value: "true"},
	}}
	got := FromInfo(info)
	want := Build{Version: "1.2.0", Commit: "abc", Main: "v1.2.0", Revision: "abcdef0123456789", Modified: true}
	if got != want {
		t.Errorf("FromInfo = %+v, want %+v", got, want)
	}
}

func TestBuildSame(t *testing.T) {
	rel := Build{Version: "1.2.0", Commit: "c1", Main: "v1.2.0", Revision: "c1"}
	trimmed := Build{Main: "v1.2.0", Revision: "c1"} // a -trimpath build: no -ldflags recorded
	cases := []struct {
		name string
		a, b Build
		same bool
		str  string // b.String()
	}{
		{"one release", rel, trimmed, true, "v1.2.0 (commit c1)"},
		{"another commit", rel, Build{Main: "v1.3.0", Revision: "c2"}, false, "v1.3.0 (commit c2)"},
		{"same commit, modified tree", rel, Build{Main: "v1.2.0", Revision: "c1", Modified: true}, false, "v1.2.0 (commit c1, modified)"},
		{"stamped versions differ", Build{Version: "0.1.0", Main: "(devel)"}, Build{Version: "9.9.9", Main: "(devel)"}, false, "9.9.9"},
		{"one built outside git", rel, Build{Main: "v1.2.0"}, false, "v1.2.0"},
		{"neither knows a commit", Build{Version: "0.1.0", Main: "(devel)"}, Build{Main: "(devel)"}, true, "(devel)"},
		{"nothing known", Build{}, Build{}, true, "unknown"},
		{"long commit shortened", rel, Build{Version: "1.2.0", Commit: "0123456789abcdef", Main: "v1.2.0", Revision: "c1"}, false, "1.2.0 (commit 0123456789ab)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.Same(c.b); got != c.same {
				t.Errorf("Same = %v, want %v", got, c.same)
			}
			if got := c.b.Same(c.a); got != c.same {
				t.Errorf("Same (reversed) = %v, want %v", got, c.same)
			}
			if got := c.b.String(); got != c.str {
				t.Errorf("String = %q, want %q", got, c.str)
			}
		})
	}
}

func TestLdflagsAndString(t *testing.T) {
	if got, want := Ldflags("1.0", ""), "-X "+Var+"=1.0"; got != want {
		t.Errorf("Ldflags = %q, want %q", got, want)
	}
	if v, ok := xValue(Ldflags("1.0", "abc"), CommitVar); !ok || v != "abc" {
		t.Errorf("xValue(commit) = %q, %v", v, ok)
	}
	if String("1.0", "") != "1.0" || String("1.0", "abc") != "1.0 commit abc" {
		t.Errorf("String: %q, %q", String("1.0", ""), String("1.0", "abc"))
	}
}

// BenchmarkOf reads the build information of a Go program (this test binary) as the slim nuv
// reads nuv-full's before every hand-over.
func BenchmarkOf(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Of(exe); err != nil {
			b.Fatal(err)
		}
	}
}
