package kube

import (
	"reflect"
	"testing"

	"github.com/nuv-dev/nuv/internal/kube/kubesel"
	"k8s.io/client-go/tools/clientcmd"
)

// quickSeeds are kubeconfigs as tools write them (quick must read these itself) and spellings it
// must leave to client-go.
var quickSeeds = []struct {
	name  string
	data  string
	quick bool // quickKubeconfig answers (else it defers to client-go)
}{
	{"kind", `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    server: https://127.0.0.1:40123
  name: kind-dev
contexts:
- context:
    cluster: kind-dev
    user: kind-dev
  name: kind-dev
current-context: kind-dev
kind: Config
preferences: {}
users:
- name: kind-dev
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=
`, true},
	{"eks exec", `apiVersion: v1
kind: Config
clusters:
- name: arn:aws:eks:eu-west-1:123456789012:cluster/dev
  cluster: {server: "https://ABC.gr7.eu-west-1.eks.amazonaws.com", certificate-authority-data: "LS0tCg=="}
contexts:
- name: dev
  context: {cluster: "arn:aws:eks:eu-west-1:123456789012:cluster/dev", user: dev, namespace: default}
current-context: dev
users:
- name: dev
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: nuv
      args: [-eks-token, --cluster-name, dev]
      env: [{name: AWS_REGION, value: eu-west-1}]
      provideClusterInfo: false
      interactiveMode: Never
`, true},
	{"token, no user in context", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://h:6443', insecure-skip-tls-verify: true}}]\ncontexts: [{name: x, context: {cluster: c}}]\nusers: [{name: u, user: {token: abc, as-groups: [a, b], as-user-extra: {k: [v]}, auth-provider: {name: oidc, config: {k: v}}}}]\n", true},
	{"json", `{"apiVersion":"v1","kind":"Config","clusters":[{"name":"c","cluster":{"server":"https://h"}}],"contexts":[{"name":"x","context":{"cluster":"c"}}],"current-context":"x"}`, true},
	{"missing current context target", "apiVersion: v1\nkind: Config\ncontexts: [{name: a, context: {cluster: missing}}]\n", true},
	{"yaml 1.1 boolean", "apiVersion: v1\nkind: Config\ncurrent-context: yes\n", false},
	{"number as name", "apiVersion: v1\nkind: Config\ncurrent-context: 12\n", false},
	{"null server", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: ~}}]\n", false},
	{"bool spelled on", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: x, insecure-skip-tls-verify: on}}]\n", false},
	{"bad base64", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: x, certificate-authority-data: '!!'}}]\n", false},
	{"duplicate name", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: x}}, {name: c, cluster: {server: y}}]\n", false},
	{"duplicate key", "apiVersion: v1\nkind: Config\ncurrent-context: a\ncurrent-context: b\n", false},
	{"anchor", "apiVersion: v1\nkind: Config\nclusters: [{name: &n c, cluster: {server: *n}}]\n", false},
	{"extensions", "apiVersion: v1\nkind: Config\nextensions: [{name: e, extension: {a: 1}}]\n", false},
	{"infinity in an unknown field", "apiVersion: v1\nkind: Config\nfoo: .inf\n", false},
	{"two documents", "apiVersion: v1\nkind: Config\n---\napiVersion: v1\n", false},
	{"other version", "apiVersion: v2\nkind: Config\n", false},
	{"tagged", "apiVersion: v1\nkind: Config\ncurrent-context: !!str x\n", false},
	{"empty", "", false},
}

// TestQuickKubeconfig: the kubeconfigs tools write are read without client-go (else the fast path
// is dead code), the doubtful ones are left to it, and where quick answers it agrees with it.
func TestQuickKubeconfig(t *testing.T) {
	for _, tc := range quickSeeds {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := kubesel.Quick([]byte(tc.data))
			if ok != tc.quick {
				t.Fatalf("quickKubeconfig answered %v, want %v", ok, tc.quick)
			}
			agreeWithClientcmd(t, []byte(tc.data))
		})
	}
}

// agreeWithClientcmd fails if quickKubeconfig answers for data and client-go reads it otherwise.
func agreeWithClientcmd(t *testing.T, data []byte) {
	t.Helper()
	m, ok := kubesel.Quick(data)
	if !ok {
		return
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatalf("quickKubeconfig read a file client-go refuses (%v):\n%s", err, data)
	}
	if want := modelOf(cfg); !reflect.DeepEqual(m, want) {
		t.Fatalf("quickKubeconfig read %+v, client-go %+v:\n%s", m, want, data)
	}
}

// FuzzQuickKubeconfig: whatever the file, when quickKubeconfig answers, client-go accepts the file
// and reads the same names, references and server URLs.
func FuzzQuickKubeconfig(f *testing.F) {
	for _, tc := range quickSeeds {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agreeWithClientcmd(t, data) })
}
