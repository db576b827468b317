package version

import (
	"strings"
	"testing"
)

func TestParseCompanions(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("0B", 32)
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "", want: map[string]string{}},
		{in: "nuv-kube_linux_amd64=" + a, want: map[string]string{"nuv-kube_linux_amd64": a}},
		{in: "nuv-node_linux_arm64=" + b + ",nuv-kube_linux_amd64=" + a,
			want: map[string]string{"nuv-kube_linux_amd64": a, "nuv-node_linux_arm64": strings.ToLower(b)}},
		{in: "nuv-kube_linux_amd64=abc", err: `companion checksum "nuv-kube_linux_amd64=abc": want name_os_arch=<SHA-256 in hex>`},
		{in: "=" + a, err: "want name_os_arch"},
		{in: "nuv-kube_linux_amd64", err: "want name_os_arch"},
		{in: "nuv-kube_linux_amd64=" + strings.Repeat("g", 64), err: "want name_os_arch"},
	} {
		got, err := ParseCompanions(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCompanions(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseCompanions(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("ParseCompanions(%q)[%s] = %q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}

func TestFormatCompanionsRoundTrip(t *testing.T) {
	sums := map[string]string{
		CompanionKey("nuv-node", "linux", "arm64"):  strings.Repeat("1", 64),
		CompanionKey("nuv-kube", "darwin", "amd64"): strings.Repeat("2", 64),
	}
	s := FormatCompanions(sums)
	if want := "nuv-kube_darwin_amd64=" + strings.Repeat("2", 64) + ",nuv-node_linux_arm64=" + strings.Repeat("1", 64); s != want {
		t.Errorf("FormatCompanions = %q, want %q (sorted by key)", s, want)
	}
	back, err := ParseCompanions(s)
	if err != nil || len(back) != 2 || back["nuv-node_linux_arm64"] != sums["nuv-node_linux_arm64"] {
		t.Errorf("ParseCompanions(FormatCompanions) = %v, %v", back, err)
	}
}
