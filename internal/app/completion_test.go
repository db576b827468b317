package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

// TestMain lets the test binary be nuv (linked as nuv and task on PATH) for the tests that drive a
// real shell: with NUV_APP_TEST_AS_NUV=1 it runs Main and exits. It is nuv-emulator, which `nuv
// emulator` hands over to, too: with NUV_APP_TEST_AS_EMULATOR=1 it runs the emulators' Main.
func TestMain(m *testing.M) {
	if os.Getenv("NUV_APP_TEST_AS_EMULATOR") == "1" {
		os.Exit(emulatorcmd.Main(context.Background(), os.Args))
	}
	emulatorProgram = func() (string, []string, error) {
		exe, err := os.Executable()
		return exe, []string{"NUV_APP_TEST_AS_EMULATOR=1"}, err
	}
	if os.Getenv("NUV_APP_TEST_AS_NUV") == "1" {
		os.Exit(Main(context.Background(), os.Args))
	}
	os.Exit(m.Run())
}

const testKubeconfig = `apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
`

// completionWorld is a project (Taskfile, two clusters in the inventory), a NUV_HOME (two local
// clusters, a plugin) and a PATH where nuv and task are this test binary.
func completionWorld(t testing.TB) (env []string, project string) {
	t.Helper()
	root := t.TempDir()
	project, home, bin := filepath.Join(root, "project"), filepath.Join(root, "home"), filepath.Join(root, "bin")
	files := map[string]string{
		"project/Taskfile.yml":            "version: '3'\nincludes:\n  docker: ./docker.yml\ntasks:\n  build:\n    cmds: [echo build]\n  deploy-all:\n    cmds: [echo deploy]\n",
		"project/docker.yml":              "version: '3'\ntasks:\n  push:\n    cmds: [echo push]\n  pull:\n    cmds: [echo pull]\n",
		"project/clusters/one.kubeconfig": testKubeconfig,
		"project/clusters/two.kubeconfig": testKubeconfig,
		"project/addons/index.yaml": "apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  addons:\n" +
			"  - {name: metrics, version: '1', source: {path: m}}\n  - {name: tracing, version: '1', source: {path: t}}\n" +
			"  stacks:\n  - {name: observability, addons: [metrics, tracing]}\n  - {name: minimal, addons: [metrics]}\n",
		"project/addons/m/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n",
		"project/addons/t/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\n",
		"home/clusters/alpha/cluster.json":   "{}",
		"home/clusters/beta/cluster.json":    "{}",
		"home/olaris-extra/nuvroot.json":     `{"version": "1.0.0"}`,
		"home/olaris-extra/nuvfile.yml":      "version: '3'\n",
		"home/olaris-extra/mesh/nuvfile.yml": "version: '3'\ntasks:\n  ping:\n    cmds: [echo ping]\n  probe:\n    cmds: [echo probe]\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(bin, 0o755)
	for _, n := range []string{"nuv", "task"} {
		if err := os.Symlink(exe, filepath.Join(bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	env = append(os.Environ(), "NUV_APP_TEST_AS_NUV=1", "NUV_HOME="+home, "NUV_PROJECT="+project,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NUV_CLUSTER=", "KUBECONFIG=")
	return env, project
}

// bashComplete loads `nuv completion bash` into a real bash, sets the completion variables bash
// sets for line (the cursor at its end) and calls the completion function, returning COMPREPLY.
func bashComplete(t *testing.T, env []string, dir, line string) []string {
	t.Helper()
	const driver = `set -e
source <(nuv completion bash)
spec=$(complete -p "${1%% *}")
fn=${spec#*-F }; fn=${fn%% *}
COMP_LINE=$1
COMP_POINT=${#1}
# bash's own word split: blanks, and COMP_WORDBREAKS characters as words of their own
read -ra COMP_WORDS <<< "$(sed -E 's/([:=])/ \1 /g' <<< "$1")"
[[ $1 == *" " || $1 == *[:=] ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command("bash", "-c", driver, "driver", line)
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion of %q: %v\n%s", line, err, out)
	}
	return strings.Fields(string(out))
}

func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is required to test the completion script: %v", err)
	}
	env, project := completionWorld(t)
	for _, tc := range []struct {
		line string
		want string
	}{
		{"nuv clu", "cluster"},
		{"nuv cluster st", "start state status stop"},
		{"nuv cluster delete ", "alpha beta"},
		{"nuv cluster logs a", "alpha"},
		{"nuv cluster create ", "aks aws eks gke kind local"}, // every provider of the registry
		{"nuv cluster create k", "kind"},
		{"nuv addons apply --stack ", "minimal observability"}, // the stacks of addons/index.yaml
		{"nuv addons plan --only ", "metrics tracing"},
		{"nuv addons ", "apply list plan remove status"},
		{"task use N=", "1 2"}, // bash completes after '=': N=1 N=2, the numbers of nuv kube list
		{"task detect N=", "1 2"},
		{"nuv cluster create local --n", "--name --nodes"},
		{"nuv kube ", "current detect env list use watch"},
		{"nuv kube use ", "one two"},
		{"nuv kube use --sh", "--shell"},
		{"nuv registry ", "down status up"},
		{"nuv operator --d", "--dry-run"},
		{"nuv all-kubes --only ", "one two"},
		{"nuv all-kubes -- dt", "dtest"},
		{"nuv up --cluster ", "alpha beta"},
		{"nuv completion ", "bash fish zsh"},
		{"nuv -ta", "-task -tasks"},
		{"nuv -task de", "deploy-all"},
		{"nuv me", "mesh"},          // a plugin's folder
		{"nuv mesh ", "ping probe"}, // its tasks
		{"task ", "build deploy-all docker:pull docker:push"},
		{"task docker:pu", "pull push"}, // relative to bash's word after ':'
		{"task --list-a", "--list-all"},
		{"nuv no-such-folder ", ""},
	} {
		t.Run(tc.line, func(t *testing.T) {
			got := strings.Join(bashComplete(t, env, project, tc.line), " ")
			if got != tc.want {
				t.Errorf("completion of %q = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
	// the top level offers built-in commands and the bundle's folders and tasks, plugins included
	top := " " + strings.Join(bashComplete(t, env, project, "nuv "), " ") + " "
	for _, w := range []string{"cluster", "kube", "all-kubes", "completion", "mesh", "local", "config"} {
		if !strings.Contains(top, " "+w+" ") {
			t.Errorf("`nuv <TAB>` lacks %s: %s", w, top)
		}
	}
}

// TestCompletionScripts checks each shell's script is produced and that bad input is a usage error.
func TestCompletionScripts(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"bash"}, 0, "complete -o default -F _nuv task"},
		{[]string{"zsh"}, 0, "compdef _nuv nuv task"},
		{[]string{"fish"}, 0, "complete -c task"},
		{[]string{"--help"}, 0, "Usage: nuv completion <verb>"},
		{nil, 0, "Usage: nuv completion <verb>"},
		{[]string{"ksh"}, 2, `unknown verb "ksh"`},
		{[]string{"zhs"}, 2, `did you mean "zsh"?`},
		{[]string{"bash", "zsh"}, 2, "unexpected arguments: zsh"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut strings.Builder
			env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, Log: cli.Quiet(), Getenv: func(string) string { return "" }, Dir: t.TempDir()}
			err := RunEnv(context.Background(), env, append([]string{"nuv", "completion"}, tc.args...))
			if code := cli.ExitCode(err); code != tc.code {
				t.Errorf("exit code %d, want %d (%v)", code, tc.code, err)
			}
			all := out.String() + errOut.String()
			if err != nil {
				all += err.Error()
			}
			if !strings.Contains(all, tc.contains) {
				t.Errorf("output lacks %q:\n%s", tc.contains, all)
			}
		})
	}
	var script strings.Builder
	env := &cli.Env{Streams: cli.Streams{Out: &script, Err: &script}, Log: cli.Quiet(), Getenv: func(string) string { return "" }}
	RunEnv(context.Background(), env, []string{"nuv", "completion", "bash"})
	check := exec.Command("bash", "-n")
	check.Stdin = strings.NewReader(script.String())
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("bash -n on the script: %v\n%s", err, b)
	}
}

// BenchmarkComplete is one completion as the shell asks for it: a new nuv process answering
// `nuv completion __complete nuv kube use ""` (the inventory read from clusters/).
func BenchmarkComplete(b *testing.B) {
	env, project := completionWorld(b)
	exe, _ := os.Executable()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(exe, "completion", "__complete", "nuv", "kube", "use", "")
		cmd.Env, cmd.Dir = env, project
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "one") {
			b.Fatalf("completion: %v %s", err, out)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/completion")
}

// TestFishCompletion drives fish's own completion engine (`complete -C LINE`) with the script of
// `nuv completion fish`; hack/test.sh installs fish.
func TestFishCompletion(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Fatalf("fish is required to test its completion script (hack/test.sh installs it): %v", err)
	}
	env, project := completionWorld(t)
	for _, tc := range []struct{ line, want string }{
		{"nuv cluster st", "start state status stop"},
		{"nuv kube use ", "one two"},
		{"nuv cluster create ", "aks aws eks gke kind local"},
		{"nuv addons remove --stack ", "minimal observability"},
		{"task use N=", "N=1 N=2"},
		{"nuv mesh p", "ping probe"},
		{"task docker:p", "docker:pull docker:push"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			cmd := exec.Command("fish", "--no-config", "-c", `nuv completion fish | source; complete -C "$argv[1]"`, tc.line)
			cmd.Env, cmd.Dir = env, project
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("fish: %v\n%s", err, out)
			}
			if got := strings.Join(strings.Fields(string(out)), " "); got != tc.want {
				t.Errorf("fish completion of %q = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}

// TestZshScriptParses checks the zsh script with zsh's own parser (zsh -n); hack/test.sh installs zsh.
func TestZshScriptParses(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Fatalf("zsh is required to check its completion script (hack/test.sh installs it): %v", err)
	}
	var script strings.Builder
	env := &cli.Env{Streams: cli.Streams{Out: &script, Err: &script}, Log: cli.Quiet(), Getenv: func(string) string { return "" }}
	if err := RunEnv(context.Background(), env, []string{"nuv", "completion", "zsh"}); err != nil {
		t.Fatal(err)
	}
	check := exec.Command("zsh", "-n")
	check.Stdin = strings.NewReader(script.String())
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("zsh -n on the script: %v\n%s", err, b)
	}
}

// TestCompletionClustersOfEveryProvider: cluster names are completed from the local provider and
// from the records of the state store, whatever their provider (an eks cluster here), without a
// network call.
func TestCompletionClustersOfEveryProvider(t *testing.T) {
	env, project := completionWorld(t)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "NUV_HOME="); ok {
			home = v
		}
	}
	rec := `{"name":"gamma","provider":"eks","phase":"running","spec":{"apiVersion":"nuv.dev/v1alpha1","kind":"Cluster","metadata":{"name":"gamma"},"spec":{"provider":"eks","region":"us-east-1"}},"created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z","generation":1}`
	if err := os.MkdirAll(filepath.Join(home, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "state", "gamma.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(bashComplete(t, env, project, "nuv cluster delete "), " "); got != "alpha beta gamma" {
		t.Errorf("completion of cluster names: %q, want %q", got, "alpha beta gamma")
	}
}
