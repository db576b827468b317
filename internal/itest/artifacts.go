package itest

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/secrets"
)

// saveArtifacts writes, before the namespace is deleted, what a failed test leaves to look at:
// the live YAML of every object it touched and the events and pods of its namespace, under
// <Artifacts>/<test>/ (0600 files in 0700 directories; a Secret's data shows as ***).
func (tr *testRun) saveArtifacts(ctx context.Context) {
	if tr.cfg.Artifacts == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	dir := filepath.Join(tr.cfg.Artifacts, tr.test.Name)
	var objs bytes.Buffer
	for _, u := range tr.touched {
		live, err := tr.find(ctx, u)
		if err != nil || len(live) == 0 {
			fmt.Fprintf(&objs, "---\n# %s: gone or unreadable (%v)\n", ref(u), err)
			continue
		}
		for _, o := range live {
			o.SetManagedFields(nil)
			secrets.RedactObject(o.Object)
			y, err := yaml.Marshal(o.Object)
			if err == nil {
				objs.WriteString("---\n")
				objs.Write(y)
			}
		}
	}
	fsutil.WriteFileAtomic(filepath.Join(dir, "objects.yaml"), objs.Bytes(), 0o600)
	var evs bytes.Buffer
	if list, err := tr.cl.cs.CoreV1().Events(tr.ns).List(ctx, metav1.ListOptions{}); err != nil {
		fmt.Fprintf(&evs, "# events: %v\n", err)
	} else {
		for _, e := range list.Items {
			fmt.Fprintf(&evs, "%s %s %s/%s %s: %s\n", e.LastTimestamp.UTC().Format(time.RFC3339), e.Type,
				e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	fsutil.WriteFileAtomic(filepath.Join(dir, "events.txt"), evs.Bytes(), 0o600)
	var pods bytes.Buffer
	if list, err := tr.cl.cs.CoreV1().Pods(tr.ns).List(ctx, metav1.ListOptions{}); err != nil {
		fmt.Fprintf(&pods, "# pods: %v\n", err)
	} else {
		for _, p := range list.Items {
			y, _ := yaml.Marshal(map[string]any{"name": p.Name, "phase": p.Status.Phase, "conditions": p.Status.Conditions,
				"containerStatuses": p.Status.ContainerStatuses})
			pods.WriteString("---\n")
			pods.Write(y)
		}
	}
	fsutil.WriteFileAtomic(filepath.Join(dir, "pods.yaml"), pods.Bytes(), 0o600)
	fmt.Fprintf(tr.cfg.Out, "    artifacts saved in %s\n", dir)
}
