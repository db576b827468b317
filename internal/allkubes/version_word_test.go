package allkubes

import "testing"

func TestVersionWord(t *testing.T) {
	for out, want := range map[string]string{
		"0.1.0-dev\n":                   "0.1.0-dev",
		"1.2.0 commit 3f1c2a\n":         "1.2.0",
		"":                              "unknown",
		"1.2.0\n1.3.0\n":                "unknown",
		"Usage: nuv -version\n":         "unknown",
		"1.2.0 built by someone else\n": "unknown",
	} {
		if got := versionWord(out); got != want {
			t.Errorf("versionWord(%q) = %q, want %q", out, got, want)
		}
	}
}
