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
		{"MYSQL_PASSWD", nil, true},
		{"BASIC_AUTH", nil, true},
		{"GOOGLE_APPLICATION_CREDENTIALS", nil, true},
		{"DATABASE_DSN", nil, true},
		{"PRIVATE_REPO_URL", nil, true},
		{"REGISTRY_HOST", nil, false},
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

func TestMaskBase64Forms(t *testing.T) {
	m := NewMasker([]string{"DB_PASSWD=hunter22", "SENTRY_DSN=https://k@sentry/1"})
	for _, text := range []string{"aHVudGVyMjI=", "aHVudGVyMjI", "hunter22", "aHR0cHM6Ly9rQHNlbnRyeS8x"} {
		if got := m.Mask("x " + text + " y"); got != "x *** y" {
			t.Errorf("Mask(%q) = %q", text, got)
		}
	}
}

func TestRedactObject(t *testing.T) {
	cases := []struct {
		name    string
		obj     map[string]any
		changed bool
		want    string
	}{
		{"secret", map[string]any{"kind": "Secret", "data": map[string]any{"password": "aHVudGVy"},
			"stringData": map[string]any{"token": "t0ken"},
			"metadata":   map[string]any{"name": "s", "annotations": map[string]any{lastApplied: `{"data":{"password":"aHVudGVy"}}`, "keep": "me"}}},
			true, "map[data:map[password:***] kind:Secret metadata:map[annotations:map[keep:me] name:s] stringData:map[token:***]]"},
		{"configmap untouched", map[string]any{"kind": "ConfigMap", "data": map[string]any{"password": "visible"}},
			false, "map[data:map[password:visible] kind:ConfigMap]"},
		{"secret without data", map[string]any{"kind": "Secret"}, false, "map[kind:Secret]"},
		{"nil", nil, false, "map[]"},
	}
	for _, tc := range cases {
		if got := RedactObject(tc.obj); got != tc.changed || fmt.Sprint(tc.obj) != tc.want {
			t.Errorf("%s: RedactObject = %v, obj %v; want %v, %s", tc.name, got, tc.obj, tc.changed, tc.want)
		}
	}
}
