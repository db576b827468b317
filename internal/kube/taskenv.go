package kube

import "os"

// TaskEnv is the environment every task nuv runs gets for the selected cluster:
// KUBECONFIG=<absolute path of its kubeconfig> and KUBE=<its type> (override or remembered
// detection; empty when never detected — nuv never guesses). Nil when nothing valid is selected,
// so tasks then see the caller's own KUBECONFIG. It makes no network call.
func TaskEnv(project string, getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	c, err := Selected(project, getenv)
	if err != nil || c.Err != nil {
		return nil
	}
	return []string{"KUBECONFIG=" + c.Path, "KUBE=" + c.Type}
}
