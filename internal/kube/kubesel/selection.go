// Package kubesel reads the project's cluster selection without client-go: which cluster of
// clusters/ (or which kubeconfig) is selected and of which type, the environment every task gets
// for it (SelectionEnv: KUBECONFIG and KUBE), and the parts of nuv's inventory that need no API
// machinery (the cluster order, the type overrides and remembered detections, the quick
// kubeconfig reader). Package kube builds the inventory, Resolve and the network side on it.
//
// Why a package of its own: the task program (cmd/nuv-task) sets KUBECONFIG and KUBE for every
// `task` and links only this, not client-go's 85 packages and their initialisers. A kubeconfig the
// quick reader cannot vouch for is not guessed at: SelectionEnv says so (ErrUnvouched) and its
// caller asks a program that links client-go.
package kubesel

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/paths"
)

// EnvCluster is the per-shell selection: a cluster name of the project (or a kubeconfig path).
// When set it wins over the project's selection in .nuv/current.
const EnvCluster = "NUV_CLUSTER"

// Ext is the file extension of a kubeconfig in clusters/.
const Ext = ".kubeconfig"

// ErrNoSelection is returned (wrapped, with a hint) when no cluster is selected.
var ErrNoSelection = errors.New("no cluster selected")

// Selection is the content of <project>/.nuv/current.
type Selection struct {
	Name       string    `json:"name"`
	Kubeconfig string    `json:"kubeconfig"`
	Type       string    `json:"type,omitempty"`
	SelectedAt time.Time `json:"selectedAt"`
}

// CurrentPath is the file holding the project's selection.
func CurrentPath(project string) string { return filepath.Join(paths.ProjectState(project), "current") }

// ProjectKubeconfig is the project's kubeconfig for kubectl and every other client:
// <project>/.nuv/kubeconfig, a symbolic link to the selected cluster's kubeconfig (see
// kube.Select).
func ProjectKubeconfig(project string) string {
	return filepath.Join(paths.ProjectState(project), "kubeconfig")
}

// ReadSelection reads .nuv/current; os.ErrNotExist (wrapped) when nothing is selected.
func ReadSelection(project string) (Selection, error) {
	p := CurrentPath(project)
	data, err := os.ReadFile(p)
	if err != nil {
		return Selection{}, err
	}
	var s Selection
	if err := json.Unmarshal(data, &s); err != nil || s.Name == "" {
		if err == nil {
			err = errors.New("no cluster name")
		}
		return Selection{}, fmt.Errorf("%s is damaged (select again with `nuv kube use N`): %w", p, err)
	}
	return s, nil
}
