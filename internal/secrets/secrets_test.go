package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestIsSecretKey(t *testing.T) {
	cases := []struct {
		key   string
		extra []string
		want  bool
	}{
		{"GITHUB_TOKEN", nil, true},
		{"db_password", nil, true},
		{"AWS_SECRET_ACCESS_KEY", nil, true},
		{"SSH_KEY_FILE", nil, true},
		{"KUBECONFIG", nil, false},
		{"USER", nil, false},
		{"REGISTRY_USER", []string{"registry_user"}, true},
		{"REGISTRY_USER", []string{"OTHER"}, false},
	}
	for _, tc := range cases {
		if got := IsSecretKey(tc.key, tc.extra...); got != tc.want {
			t.Errorf("IsSecretKey(%q, %v) = %v, want %v", tc.key, tc.extra, got, tc.want)
		}
	}
}

func TestMask(t *testing.T) {
	env := []string{
		"API_TOKEN=abc123secret",
		"API_TOKEN_PREFIX=abc", // shorter value contained in the longer one
		"DB_PASSWORD=hunter22",
		"SHORT_KEY=ab", // too short to mask
		"HOST=example.com",
		"MALFORMED",
		"REG_USER=robot",
	}
	cases := []struct {
		in, want string
	}{
		{"curl -H 'Authorization: abc123secret' example.com", "curl -H 'Authorization: ***' example.com"},
		{"login hunter22 hunter22", "login *** ***"},
		{"prefix abc only", "prefix *** only"},
		{"ab stays", "ab stays"},
		{"user robot", "user ***"},
		{"nothing secret", "nothing secret"},
	}
	m := NewMasker(env, "REG_USER")
	for _, tc := range cases {
		if got := m.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Mask("x hunter22", env); got != "x ***" {
		t.Errorf("Mask() = %q", got)
	}
	var zero *Masker
	if got := zero.Mask("hunter22"); got != "hunter22" {
		t.Errorf("nil masker changed text: %q", got)
	}
}

func TestMaskWriterAndError(t *testing.T) {
	m := NewMasker([]string{"MY_SECRET=s3cr3t-value"})
	var buf bytes.Buffer
	w := m.Writer(&buf)
	n, err := fmt.Fprintf(w, "task: [x] echo s3cr3t-value\n")
	if err != nil || n != len("task: [x] echo s3cr3t-value\n") {
		t.Errorf("Write = %d, %v", n, err)
	}
	if buf.String() != "task: [x] echo ***\n" {
		t.Errorf("written %q", buf.String())
	}
	base := errors.New("login with s3cr3t-value failed")
	err = m.Error(fmt.Errorf("deploy: %w", base))
	if err.Error() != "deploy: login with *** failed" {
		t.Errorf("error %q", err.Error())
	}
	if !errors.Is(err, base) {
		t.Error("masked error lost its chain")
	}
	m.AddValue("extra-token")
	if got := m.Mask("extra-token"); got != "***" {
		t.Errorf("AddValue: %q", got)
	}
}
