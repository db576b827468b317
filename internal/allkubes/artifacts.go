package allkubes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/secrets"
)

// collectTimeout bounds the gathering of one cluster's failure artifacts.
const collectTimeout = 30 * time.Second

// maxPodLogs bounds how many pods' logs are saved per cluster.
const maxPodLogs = 30

// collect saves the failure artifacts of a failed cell under <report>/artifacts/<name>/ (name: the
// cluster, or <cluster>-upgrade for its upgrade cell):
// whatever the child saved itself ($NUV_ARTIFACTS), the cluster's events, pod statuses and logs,
// and the current YAML of every object the child recorded as touched ($NUV_TOUCHED).
// Collection is best effort: what cannot be read is noted in errors.txt.
func (o *Options) collect(ctx context.Context, c Cluster, p *probe, name string, sc scratch, dir string, res *report.Result, logf io.Writer) {
	rel := filepath.ToSlash(filepath.Join("artifacts", name))
	dest := filepath.Join(dir, rel)
	if err := os.MkdirAll(dest, 0o700); err != nil {
		fmt.Fprintf(logf, "nuv all-kubes: artifacts: %v\n", err)
		return
	}
	res.Artifacts = rel
	var problems []string
	note := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if err := o.copyTree(sc.artifacts, filepath.Join(dest, "child")); err != nil {
		note("copy the child's artifacts: %v", err)
	}
	if data, err := os.ReadFile(sc.touched); err == nil {
		o.writeArtifact(filepath.Join(dest, "touched.jsonl"), data)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), collectTimeout)
	defer cancel()
	cfg := rest.CopyConfig(p.cfg)
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		note("client: %v", err)
	} else {
		o.collectEvents(cctx, cs, dest, note)
		o.collectPods(cctx, cs, dest, note)
	}
	o.collectTouched(cctx, cfg, sc.touched, dest, note)
	if len(problems) > 0 {
		o.writeArtifact(filepath.Join(dest, "errors.txt"), []byte(strings.Join(problems, "\n")+"\n"))
	}
	fmt.Fprintf(logf, "nuv all-kubes: failure artifacts saved in %s\n", dest)
}

func (o *Options) collectEvents(ctx context.Context, cs kubernetes.Interface, dest string, note func(string, ...any)) {
	evs, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{Limit: 2000})
	if err != nil {
		note("events: %v", err)
		return
	}
	items := evs.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]).Before(eventTime(items[j])) })
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-20s %-8s %-40s %-24s %s\n", "TIME", "TYPE", "OBJECT", "REASON", "MESSAGE")
	for _, e := range items {
		obj := fmt.Sprintf("%s/%s/%s", e.InvolvedObject.Namespace, strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name)
		fmt.Fprintf(&b, "%-20s %-8s %-40s %-24s %s\n", eventTime(e).UTC().Format(time.RFC3339), e.Type, obj, e.Reason, strings.TrimSpace(e.Message))
	}
	o.writeArtifact(filepath.Join(dest, "events.txt"), b.Bytes())
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func (o *Options) collectPods(ctx context.Context, cs kubernetes.Interface, dest string, note func(string, ...any)) {
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		note("pods: %v", err)
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-50s %-10s %-8s %s\n", "POD", "PHASE", "READY", "CONDITIONS / CONTAINERS")
	for _, p := range pods.Items {
		ready := 0
		var cst []string
		for _, s := range p.Status.ContainerStatuses {
			if s.Ready {
				ready++
			}
			state := "running"
			switch {
			case s.State.Waiting != nil:
				state = "waiting:" + s.State.Waiting.Reason
			case s.State.Terminated != nil:
				state = fmt.Sprintf("terminated:%s(%d)", s.State.Terminated.Reason, s.State.Terminated.ExitCode)
			}
			cst = append(cst, fmt.Sprintf("%s=%s restarts=%d", s.Name, state, s.RestartCount))
		}
		var conds []string
		for _, cd := range p.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s", cd.Type, cd.Status))
		}
		fmt.Fprintf(&b, "%-50s %-10s %d/%-6d %s; %s\n", p.Namespace+"/"+p.Name, p.Status.Phase, ready,
			len(p.Spec.Containers), strings.Join(conds, ","), strings.Join(cst, ","))
	}
	o.writeArtifact(filepath.Join(dest, "pods.txt"), b.Bytes())
	n := 0
	for _, p := range pods.Items {
		if p.Namespace == "kube-system" || n >= maxPodLogs {
			continue
		}
		for _, ctr := range p.Spec.Containers {
			n++
			tail := int64(500)
			data, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: ctr.Name, TailLines: &tail}).DoRaw(ctx)
			if err != nil {
				data = []byte(fmt.Sprintf("# logs unavailable: %v\n", err))
			}
			name := fmt.Sprintf("%s_%s_%s.log", p.Namespace, p.Name, ctr.Name)
			o.writeArtifact(filepath.Join(dest, "logs", name), data)
		}
	}
}

// collectTouched writes the live YAML of every object listed in the touched file to objects.yaml.
func (o *Options) collectTouched(ctx context.Context, cfg *rest.Config, touched, dest string, note func(string, ...any)) {
	objs, err := readTouched(touched)
	if err != nil {
		note("touched objects: %v", err)
	}
	if len(objs) == 0 {
		return
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		note("discovery: %v", err)
		return
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		note("dynamic client: %v", err)
		return
	}
	var b bytes.Buffer
	for _, t := range objs {
		gv, err := schema.ParseGroupVersion(t.APIVersion)
		if err != nil {
			fmt.Fprintf(&b, "---\n# %s %s/%s: %v\n", t.Kind, t.Namespace, t.Name, err)
			continue
		}
		m, err := mapper.RESTMapping(gv.WithKind(t.Kind).GroupKind(), gv.Version)
		if err != nil {
			fmt.Fprintf(&b, "---\n# %s %s/%s: %v\n", t.Kind, t.Namespace, t.Name, err)
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if t.Namespace != "" {
			ri = dyn.Resource(m.Resource).Namespace(t.Namespace)
		}
		u, err := ri.Get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			fmt.Fprintf(&b, "---\n# %s %s/%s: %v\n", t.Kind, t.Namespace, t.Name, err)
			continue
		}
		u.SetManagedFields(nil)
		secrets.RedactObject(u.Object)
		y, err := yaml.Marshal(u.Object)
		if err != nil {
			continue
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	o.writeArtifact(filepath.Join(dest, "objects.yaml"), b.Bytes())
}

// readTouched reads the touched-objects file (one JSON object a line), without duplicates.
func readTouched(path string) ([]report.TouchedObject, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[report.TouchedObject]bool{}
	var out []report.TouchedObject
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var t report.TouchedObject
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil || t.Kind == "" || t.Name == "" {
			continue
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, sc.Err()
}

// writeArtifact writes one artifact file: secret values masked, mode 0600 (directories 0700).
func (o *Options) writeArtifact(path string, data []byte) error {
	return fsutil.WriteFileAtomic(path, []byte(o.Masker.Mask(string(data))), 0o600)
}

// copyTree copies the regular files under src to dst (a missing or empty src copies nothing),
// masked like every artifact.
func (o *Options) copyTree(src, dst string) error {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	}
	return fsutil.EachFile(src, func(path, rel string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return o.writeArtifact(filepath.Join(dst, rel), data)
	})
}
