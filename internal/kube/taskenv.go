package kube

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/paths"
)

// TaskEnv is the environment every task nuv runs gets for the selected cluster:
// KUBECONFIG=<absolute path of its kubeconfig> and KUBE=<its type> (override or remembered
// detection; empty when never detected — nuv never guesses). Nil when nothing is selected, so
// tasks then see the caller's own KUBECONFIG. It makes no network call. See SelectionEnv for what
// a broken selection gives.
func TaskEnv(project string, getenv func(string) string) []string {
	env, _ := SelectionEnv(project, getenv)
	return env
}

// SelectionEnv is TaskEnv with the reason when a selection exists but cannot be used (NUV_CLUSTER
// names no cluster, .nuv/current is damaged or names a removed kubeconfig, the kubeconfig is
// invalid, KUBE names no type). Then the environment still sets KUBECONFIG, to a path that does not
// exist (<project>/.nuv/no-valid-selection), so a task's kubectl fails instead of silently acting
// on whatever cluster the caller's own KUBECONFIG or ~/.kube/config points at. Nothing selected at
// all gives nil, nil: tasks then see the caller's KUBECONFIG and KUBE, which is also what Resolve
// falls back to, so a task and a nuv command agree on the cluster.
func SelectionEnv(project string, getenv func(string) string) ([]string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.TrimSpace(getenv(EnvCluster)) == "" && !selectionRecorded(project) {
		return nil, nil
	}
	t, err := Resolve(project, "", getenv)
	if err != nil {
		return []string{"KUBECONFIG=" + filepath.Join(paths.ProjectState(project), "no-valid-selection"), "KUBE="}, err
	}
	return []string{"KUBECONFIG=" + t.Kubeconfig, "KUBE=" + t.Type}, nil
}
