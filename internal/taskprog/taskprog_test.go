package taskprog

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube/kubecmd"
)

func TestTaskArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rest []string
		ok   bool
	}{
		{[]string{"task"}, []string{}, true},
		{[]string{"/usr/local/bin/task", "2"}, []string{"2"}, true},
		{[]string{"task.exe", "--list"}, []string{"--list"}, true},
		{[]string{"nuv-task", "build", "--", "x"}, []string{"build", "--", "x"}, true},
		{[]string{"nuv", "-task", "--version"}, []string{"--version"}, true},
		{[]string{"/opt/nuv/nuv", "--task"}, []string{}, true},
		{[]string{"nuv", "cluster", "list"}, nil, false},
		{[]string{"nuv"}, nil, false},
		{[]string{"datefmt", "-task"}, nil, false},
		{nil, nil, false},
	} {
		rest, ok := TaskArgs(tc.args)
		if ok != tc.ok || ok && !slices.Equal(rest, tc.rest) {
			t.Errorf("TaskArgs(%q) = %q, %v; want %q, %v", tc.args, rest, ok, tc.rest, tc.ok)
		}
	}
}

// TestOptions: every task gets the user's configuration as variables, the project's .env as
// defaults and the configuration's secret names to mask, read the way the full program reads them.
func TestOptions(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(project, "Taskfile.yml"), "version: '3'\n")
	write(filepath.Join(project, ".env"), "FROM_DOTENV=yes\n")
	write(filepath.Join(home, "config.json"), `{"registry": {"host": "r.example"}, "secrets": ["deploy_token"]}`)
	vars := map[string]string{"NUV_HOME": home, "HOME": home}
	env := &cli.Env{Log: cli.Quiet(), Getenv: func(k string) string { return vars[k] }, Dir: project}
	opts, err := Options(env, Setup(env))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts.Env, "REGISTRY_HOST=r.example") {
		t.Errorf("Env %q lacks REGISTRY_HOST=r.example from %s", opts.Env, filepath.Join(home, "config.json"))
	}
	if !slices.ContainsFunc(opts.DefaultEnv, func(kv string) bool { return strings.HasPrefix(kv, "FROM_DOTENV=") }) {
		t.Errorf("DefaultEnv %q lacks the project's .env", opts.DefaultEnv)
	}
	if !slices.Contains(opts.SecretKeys, "DEPLOY_TOKEN") {
		t.Errorf("SecretKeys %q lack DEPLOY_TOKEN", opts.SecretKeys)
	}
}

// TestTaskProgramLinksNoClientGo: the task program reads the cluster selection without client-go
// (kubesel), so it links none of client-go's and apimachinery's packages and their initialisers.
func TestTaskProgramLinksNoClientGo(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the task program's packages with the go command")
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/nuv-task")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/nuv-task: %v", err)
	}
	var k8s []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "k8s.io/") {
			k8s = append(k8s, p)
		}
	}
	if len(k8s) > 0 {
		t.Errorf("./cmd/nuv-task links %d packages of k8s.io (client-go: %v): %q", len(k8s), slices.Contains(k8s, "k8s.io/client-go/rest"), k8s)
	}
}

// TestKubeEnv: tasks get the selected cluster's KUBECONFIG and KUBE; for a kubeconfig only
// client-go's reader vouches for (an extension, as minikube writes; malformed YAML), the answer
// and the reason come from `nuv kube env --tasks` (this test binary acting as nuv: TestMain).
func TestKubeEnv(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envActAsNuv, "1")
	project, home := t.TempDir(), t.TempDir()
	plain := "apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts:\n- name: a\n  context: {cluster: a, user: a}\nclusters:\n- name: a\n  cluster: {server: \"https://127.0.0.1:7001\"}\nusers:\n- name: a\n  user: {token: t}\n"
	files := map[string]string{
		"plain.kubeconfig":  plain,
		"plain.type":        "kind\n",
		"ext.kubeconfig":    strings.Replace(plain, "current-context: a", "current-context: a\nextensions:\n- name: cluster_info\n  extension: {provider: example}", 1),
		"ext.type":          "eks\n",
		"broken.kubeconfig": "apiVersion: v1\nkind: Config\nclusters: [oops\n",
	}
	for n, c := range files {
		p := filepath.Join(project, "clusters", n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		cluster, want, warning string
	}{
		{"plain", "KUBECONFIG=" + filepath.Join(project, "clusters", "plain.kubeconfig") + " KUBE=kind", ""},
		{"ext", "KUBECONFIG=" + filepath.Join(project, "clusters", "ext.kubeconfig") + " KUBE=eks", ""},
		{"broken", "KUBECONFIG=" + filepath.Join(project, ".nuv", "no-valid-selection") + " KUBE=",
			"cluster selection: cluster broken (" + filepath.Join(project, "clusters", "broken.kubeconfig") + ", from NUV_CLUSTER): invalid kubeconfig"},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			vars := map[string]string{"NUV_HOME": home, "HOME": home, "NUV_CLUSTER": tc.cluster}
			var log strings.Builder
			env := &cli.Env{Log: cli.NewLogger(&log, 0), Getenv: func(k string) string { return vars[k] }, Dir: project, Exe: self}
			got := strings.Join(KubeEnv(env), " ")
			if got != tc.want {
				t.Errorf("KubeEnv = %q, want %q", got, tc.want)
			}
			if tc.warning == "" && log.Len() > 0 || !strings.Contains(log.String(), tc.warning) {
				t.Errorf("warnings %q, want %q", log.String(), tc.warning)
			}
		})
	}
}

// envActAsNuv makes this test binary answer `nuv kube ...` as nuv does (TestKubeEnv).
const envActAsNuv = "NUV_TASKPROG_TEST_AS_NUV"

func TestMain(m *testing.M) {
	if os.Getenv(envActAsNuv) == "1" && len(os.Args) > 2 && os.Args[1] == "kube" {
		streams := cli.OSStreams()
		env, err := cli.NewEnv(streams)
		if err != nil {
			os.Exit(cli.Report(streams, err))
		}
		os.Exit(cli.Report(streams, cli.Prefix("nuv kube", kubecmd.NewCommand(nil).Run(context.Background(), env, os.Args[2:]))))
	}
	os.Exit(m.Run())
}
