package deploy

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/secrets"
)

func decodeYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDryRunDiffHidesSecrets renders --dry-run diffs of a Secret (created, changed, unchanged) and
// of a Deployment carrying a secret variable's value, and finds no secret value in them.
func TestDryRunDiffHidesSecrets(t *testing.T) {
	const live = `apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"b2xkLXBhc3N3b3Jk"}}'
data:
  password: b2xkLXBhc3N3b3Jk
  user: cm9ib3Q=
`
	const applied = `apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: default
data:
  password: bmV3LXBhc3N3b3Jk
  user: cm9ib3Q=
stringData:
  token: plain-t0ken-value
`
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: default}
spec:
  template:
    spec:
      containers:
      - name: op
        env:
        - {name: REGISTRY_AUTH, value: env-auth-value}
`
	masker := secrets.NewMasker([]string{"REGISTRY_AUTH=env-auth-value", "HOME=/root"})
	cases := []struct {
		name      string
		cur, res  string
		ch        change
		want      []string
		forbidden []string
	}{
		{name: "secret changes", cur: live, res: applied, ch: changed,
			want:      []string{"-  password: '*** (before)'", "+  password: '*** (after)'", "user: '***'", "token: '*** (after)'"},
			forbidden: []string{"b2xkLXBhc3N3b3Jk", "bmV3LXBhc3N3b3Jk", "cm9ib3Q=", "plain-t0ken-value", "last-applied"}},
		{name: "secret created", res: applied, ch: created,
			want:      []string{"+  password: '*** (after)'"},
			forbidden: []string{"bmV3LXBhc3N3b3Jk", "cm9ib3Q=", "plain-t0ken-value"}},
		{name: "secret unchanged", cur: applied, res: applied, ch: unchanged,
			want: []string{"= secret default/creds unchanged"}},
		{name: "a secret variable's value elsewhere", res: deployment, ch: created,
			want:      []string{"value: ***"},
			forbidden: []string{"env-auth-value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cur *unstructured.Unstructured
			if tc.cur != "" {
				cur = decodeYAML(t, tc.cur)
			}
			res := decodeYAML(t, tc.res)
			before, after := dryRunPair(cur, res)
			ch := tc.ch
			if before == after {
				ch = unchanged
			}
			var out bytes.Buffer
			printDiff(masker.Writer(&out), objRef(res), ch, before, after)
			got := out.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("diff lacks %q:\n%s", w, got)
				}
			}
			for _, f := range tc.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("diff shows %q:\n%s", f, got)
				}
			}
			if tc.res == applied && res.Object["data"].(map[string]any)["password"] == secrets.Placeholder {
				t.Error("dryRunPair changed the server's object")
			}
		})
	}
}
