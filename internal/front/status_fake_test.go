package front

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/proc"
)

// fakeAPI is a Kubernetes API server of recorded answers: discovery (what the full program's REST
// mapper asks), the nodes, the operator's Deployment and the Whisks, each settable per case.
type fakeAPI struct {
	mu sync.Mutex
	answers
}

// answers are what fakeAPI answers of the objects.
type answers struct {
	nodes, deploy, whisks  string // JSON bodies; "" answers 404 Not Found
	deployCode, whisksCode int    // a status other than 200/404 (0: by the body)
}

func (a *fakeAPI) set(f func(a *answers)) { a.mu.Lock(); defer a.mu.Unlock(); f(&a.answers) }

func notFound(w http.ResponseWriter, name, kind string) {
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"%s.apps %s not found","reason":"NotFound","details":{"name":%q,"group":"apps","kind":%q},"code":404}`, kind, name, name, kind)
}

func (a *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	body, code := "", 0
	switch r.URL.Path {
	case "/api":
		body = `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`
	case "/apis":
		body = `{"kind":"APIGroupList","apiVersion":"v1","groups":[` +
			`{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},` +
			`{"name":"nuv.dev","versions":[{"groupVersion":"nuv.dev/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"nuv.dev/v1alpha1","version":"v1alpha1"}}]}`
	case "/api/v1":
		body = `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"nodes","singularName":"node","namespaced":false,"kind":"Node","verbs":["get","list"]}]}`
	case "/apis/apps/v1":
		body = `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get","list"]}]}`
	case "/apis/nuv.dev/v1alpha1":
		body = `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"nuv.dev/v1alpha1","resources":[{"name":"whisks","singularName":"whisk","namespaced":true,"kind":"Whisk","verbs":["get","list"]}]}`
	case "/api/v1/nodes":
		body = a.nodes
		if r.URL.Query().Get("labelSelector") == kube.LabelProvider+"=local" && a.nodes == genericNodes {
			body = `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[]}`
		}
	case "/apis/apps/v1/namespaces/nuv-system/deployments/whisk-operator":
		body, code = a.deploy, a.deployCode
		if body == "" && code == 0 {
			notFound(w, "whisk-operator", "deployments")
			return
		}
	case "/apis/nuv.dev/v1alpha1/whisks":
		body, code = a.whisks, a.whisksCode
		if body == "" && code == 0 { // a group the server does not serve: a bare 404, as kube-apiserver answers
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "404 page not found\n")
			return
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`)
		return
	}
	if code != 0 {
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"boom","reason":"InternalError","code":%d}`, code)
		return
	}
	fmt.Fprint(w, body)
}

const (
	localNodes   = `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"dev-node-0","labels":{"nuv.dev/provider":"local","nuv.dev/cluster":"dev"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]}`
	genericNodes = `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"worker-1","labels":{}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]}`
	deployOK     = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"whisk-operator","namespace":"nuv-system","generation":2},` +
		`"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"manager","image":"ghcr.io/nuv-dev/whisk-operator:latest"},{"name":"proxy","image":"proxy:1"}]}}},` +
		`"status":{"observedGeneration":2,"replicas":1,"updatedReplicas":1,"availableReplicas":1,"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}`
	deployRolling = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"whisk-operator","namespace":"nuv-system","generation":3},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"manager","image":"ghcr.io/nuv-dev/whisk-operator:v2"}]}}},` +
		`"status":{"observedGeneration":3,"replicas":2,"updatedReplicas":2,"availableReplicas":1,"conditions":[{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable","message":"Deployment does not have minimum availability."}]}}`
	whiskList = `{"apiVersion":"nuv.dev/v1alpha1","kind":"WhiskList","metadata":{},"items":[` +
		`{"apiVersion":"nuv.dev/v1alpha1","kind":"Whisk","metadata":{"name":"whisk","namespace":"default","generation":1},"status":{"conditions":[` +
		`{"type":"Ready","status":"True","reason":"Ready","message":"all components ready","observedGeneration":1},` +
		`{"type":"RedisReady","status":"True","reason":"Available","message":"redis answers","observedGeneration":1},` +
		`{"type":"Odd","status":"False","reason":42,"message":1.5}]}},` +
		`{"apiVersion":"nuv.dev/v1alpha1","kind":"Whisk","metadata":{"name":"old","namespace":"team-a","deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["whisk.nuv.dev/cleanup"]},` +
		`"status":{"conditions":[{"type":"Ready","status":"False","reason":"Deleting","message":"waiting for the stores' PVCs"}]}},` +
		`{"apiVersion":"nuv.dev/v1alpha1","kind":"Whisk","metadata":{"name":"new","namespace":"team-b"}}]}`
)

// TestStatusSameAsFull: against an API server of recorded answers, in every state the report
// distinguishes (local cluster with the host-run operator running or not, another cluster; the
// operator Available, rolling out or missing; Whisks ready, being deleted, without conditions, or
// their kind not served), the front answers `nuv status` in every format with the full program's
// bytes once the full program recorded its render; before that, and on any answer it does not
// know, it hands over.
func TestStatusSameAsFull(t *testing.T) {
	api := &fakeAPI{answers: answers{nodes: localNodes, deploy: deployOK, whisks: whiskList}}
	srv := httptest.NewServer(api)
	defer srv.Close()

	root := t.TempDir()
	project, home := filepath.Join(root, "project"), filepath.Join(root, "home")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repoRoot(t), "operator"), filepath.Join(project, "operator")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(project, "clusters", "dev.kubeconfig"), fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster:
    server: %s
users:
- name: dev
  user:
    token: not-a-secret
contexts:
- name: dev
  context:
    cluster: dev
    user: dev
current-context: dev
`, srv.URL))
	f := &statusFixture{project: project, vars: map[string]string{"NUV_HOME": home, "NUV_CACHE_DIR": filepath.Join(root, "cache"), kube.EnvCluster: "dev"}}

	if out, ok := frontStatus(t, f); ok {
		t.Fatalf("the front answered before the full program recorded a render:\n%s", out)
	}
	fullStatus(t, f) // renders operator/config with kustomize, records the Deployments
	pidFile := filepath.Join(home, "clusters", "dev", "pids", "operator.pid")

	for _, tc := range []struct {
		name  string
		setup func(a *answers)
		host  bool // the host-run operator's pid file names a live process (this test)
	}{
		{"local, operator Available, three Whisks", func(a *answers) {}, false},
		{"local, host operator running", func(a *answers) {}, true},
		{"operator rolling out", func(a *answers) { a.deploy = deployRolling }, false},
		{"operator missing, Whisk kind not served", func(a *answers) { a.deploy, a.whisks = "", "" }, false},
		{"another cluster (generic)", func(a *answers) { a.nodes = genericNodes }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api.set(func(a *answers) { *a = answers{nodes: localNodes, deploy: deployOK, whisks: whiskList}; tc.setup(a) })
			_ = os.RemoveAll(filepath.Join(home, "clusters"))
			if tc.host {
				if err := os.MkdirAll(filepath.Dir(pidFile), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := proc.WriteRecord(pidFile, os.Getpid()); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range statusForms {
				want, _ := fullStatus(t, f, args...)
				got, ok := frontStatus(t, f, args...)
				if !ok {
					t.Fatalf("the front handed `nuv status %s` over; want it answered", strings.Join(args, " "))
				}
				if got != want {
					t.Errorf("nuv status %s: front:\n%s\nfull program:\n%s", strings.Join(args, " "), got, want)
				}
			}
		})
	}

	out, _ := fullStatus(t, f, "-o", "wide")
	for _, s := range []string{"cluster:  dev (local) " + srv.URL, "from:     NUV_CLUSTER=dev (this shell's selection)",
		"operator: deployment nuv-system/whisk-operator Available, image ghcr.io/nuv-dev/whisk-operator:latest,proxy:1",
		"whisk:    team-a/old Ready=False (Deleting) being deleted, finalizers [whisk.nuv.dev/cleanup]", "whisk:    team-b/new Ready=Unknown",
		"Odd              False  42                   1.5"} {
		if !strings.Contains(strings.ReplaceAll(out, "host:     operator not running (local cluster: `nuv operator` starts it)\n", ""), s) {
			t.Errorf("the fixture's status lacks %q:\n%s", s, out)
		}
	}

	for _, tc := range []struct {
		name  string
		args  []string
		setup func(a *answers)
	}{
		{"a 404 that is not the Deployment's", nil, func(a *answers) { a.deploy, a.deployCode = "", http.StatusNotFound }},
		{"an error reading the Deployment", nil, func(a *answers) { a.deployCode = 500 }},
		{"an error listing the Whisks", nil, func(a *answers) { a.whisksCode = 503 }},
		{"an error listing the nodes", nil, func(a *answers) { a.nodes = "not json" }},
		{"help", []string{"-h"}, nil},
		{"deprecated --json", []string{"--json"}, nil},
		{"--timeout", []string{"--timeout", "1m"}, nil},
		{"unknown flag", []string{"--all"}, nil},
		{"bad format", []string{"-o", "name"}, nil},
		{"an argument", []string{"x"}, nil},
	} {
		t.Run("hand-over: "+tc.name, func(t *testing.T) {
			api.set(func(a *answers) {
				*a = answers{nodes: localNodes, deploy: deployOK, whisks: whiskList}
				if tc.setup != nil {
					tc.setup(a)
				}
			})
			if out, ok := frontStatus(t, f, tc.args...); ok {
				t.Errorf("the front answered `nuv status %s`:\n%s\nwant it handed to the full program", strings.Join(tc.args, " "), out)
			}
		})
	}

	t.Run("hand-over: record of another render", func(t *testing.T) {
		api.set(func(a *answers) { *a = answers{nodes: localNodes, deploy: deployOK, whisks: whiskList} })
		f.vars["TAG"] = "v9"
		defer delete(f.vars, "TAG")
		if out, ok := frontStatus(t, f); ok {
			t.Errorf("the front answered with TAG changed (another render):\n%s", out)
		}
		if _, err := os.Stat(rendercache.Dir(f.getenv)); err != nil {
			t.Errorf("no render record directory: %v", err)
		}
	})
}
