package debimage_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/image/debimage"
	"github.com/nuv-dev/nuv/internal/image/imagecmd"
	"github.com/nuv-dev/nuv/internal/testverbs"
)

// testProject is a project directory whose operator and tests are the repository's.
func testProject(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "operator", "tests"} {
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestIntegrationKindWorkload runs the reference workload for real: a kind cluster (the project's
// dockerd, the offline node image), the operator image loaded (`nuv image load`) and the workload's
// images built from Debian's packages and loaded (`nuv image workload --load`), `nuv operator` and
// `nuv instance` with tests/kind/whisk.yaml, every pod of the instance Running and Ready with its
// volume bound, redis storing and returning a value for a client pod, the CouchDB-compatible server
// holding the databases its init Job made and storing a document that outlives its pod (the volume),
// nginx serving the Whisk's page
// through its Service, and then `nuv dtest` passing on the cluster.
func TestIntegrationKindWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a container runtime, debootstrap and a kind node image; skipped under -short")
	}
	ctx := context.Background()
	project := testProject(t)
	home := t.TempDir()
	const name = "nuv-kind-wl"
	kindtest.Cluster(t, home, project, name, localtest.Logger(t))

	vars := map[string]string{"NUV_PROJECT": project, "NUV_CLUSTER": name, "NUV_HOME": home, "HOME": os.Getenv("HOME"),
		"PATH": os.Getenv("PATH"), "DOCKER_HOST": os.Getenv("DOCKER_HOST"), "GOFLAGS": os.Getenv("GOFLAGS"),
		"GOCACHE": os.Getenv("GOCACHE"), "GOMODCACHE": os.Getenv("GOMODCACHE"), "GOPROXY": os.Getenv("GOPROXY"),
		"NUV_CACHE_DIR": os.Getenv("NUV_CACHE_DIR"), "XDG_CACHE_HOME": os.Getenv("XDG_CACHE_HOME"),
		"NUV_DEBIAN_SUITE": os.Getenv("NUV_DEBIAN_SUITE"), "NUV_DEBIAN_MIRROR": os.Getenv("NUV_DEBIAN_MIRROR")}
	getenv := func(k string) string { return vars[k] }
	run := func(what string, fn func(env *cli.Env) error) string {
		t.Helper()
		var out, errb bytes.Buffer
		env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 1), Getenv: getenv, Dir: project}
		start := time.Now()
		if err := fn(env); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", what, err, out.String(), errb.String())
		}
		t.Logf("%s in %.1fs:\n%s%s", what, time.Since(start).Seconds(), out.String(), errb.String())
		return out.String()
	}
	run("nuv image load", func(env *cli.Env) error { return imagecmd.Run(ctx, env, []string{"load"}) })
	refs := run("nuv image workload --load", func(env *cli.Env) error { return imagecmd.Run(ctx, env, []string{"workload", "--load"}) })
	for _, n := range debimage.WorkloadNames() {
		if ref := debimage.Workload()[n].Ref(); !strings.Contains(refs, ref) {
			t.Errorf("nuv image workload did not print %s:\n%s", ref, refs)
		}
	}

	o := deploy.Options{Project: project, Home: home, Timeout: 4 * time.Minute, Log: localtest.Logger(t), Getenv: getenv}
	run("nuv operator", func(env *cli.Env) error { o.Out = env.Out; return deploy.Operator(ctx, o) })
	run("nuv instance", func(env *cli.Env) error { o.Out = env.Out; return deploy.Instance(ctx, o) })

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(project, "clusters", name+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=whisk"})
	if err != nil {
		t.Fatal(err)
	}
	running := map[string]bool{}
	for _, pod := range pods.Items {
		if pod.Status.Phase == corev1.PodSucceeded { // a Job's pod
			continue
		}
		ready := pod.Status.Phase == corev1.PodRunning
		for _, st := range pod.Status.ContainerStatuses {
			ready = ready && st.Ready
		}
		if !ready {
			t.Errorf("pod %s is %s, not Running and Ready: %+v", pod.Name, pod.Status.Phase, pod.Status.ContainerStatuses)
		}
		running[pod.Labels["app.kubernetes.io/component"]] = ready
		t.Logf("pod %s (%s) on %s: %s, image %s", pod.Name, pod.Labels["app.kubernetes.io/component"], pod.Spec.NodeName, pod.Status.Phase, pod.Spec.Containers[0].Image)
	}
	for _, n := range debimage.WorkloadNames() {
		if !running[n] {
			t.Errorf("no Running and Ready pod of component %s", n)
		}
	}
	pvcs, err := cs.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=whisk"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pvc := range pvcs.Items {
		if pvc.Status.Phase != corev1.ClaimBound {
			t.Errorf("PVC %s is %s, not Bound", pvc.Name, pvc.Status.Phase)
		}
	}

	// redis stores and returns a value for a client in another pod, through its Service's DNS name
	runJob(t, ctx, cs, "redis-client", debimage.Redis().Ref(), []string{"sh", "-c",
		`set -e; redis-cli -h whisk-redis SET nuv-check "$(hostname)" | grep -qx OK; test "$(redis-cli -h whisk-redis GET nuv-check)" = "$(hostname)"; redis-cli -h whisk-redis CONFIG GET dir`})
	// the CouchDB-compatible server: the init Job made the Whisk's databases; a client stores a
	// document in one and reads it back
	runJob(t, ctx, cs, "couchdb-client", debimage.CouchDB().Ref(), []string{"sh", "-c",
		`set -e; u=http://whisk-couchdb:5984; curl -sf $u/_all_dbs | tee /dev/stderr | grep -q '"whisks"'; ` +
			`curl -sf -X PUT -H 'Content-Type: application/json' -d '{"kind":"action","by":"nuv"}' $u/whisks/nuv-check; ` +
			`curl -sf $u/whisks/nuv-check | tee /dev/stderr | grep -q '"by":"nuv"'`})
	// the document is on the volume: it outlives the pod
	if err := cs.CoreV1().Pods("default").Delete(ctx, "whisk-couchdb-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ctx, cs, "whisk-couchdb-0")
	runJob(t, ctx, cs, "couchdb-after-restart", debimage.CouchDB().Ref(), []string{"sh", "-c",
		`set -e; until curl -sf http://whisk-couchdb:5984/ >/dev/null; do sleep 1; done; curl -sf http://whisk-couchdb:5984/whisks/nuv-check | tee /dev/stderr | grep -q '"by":"nuv"'`})
	// nginx serves the Whisk's page through its Service (the API server's service proxy)
	page, err := cs.CoreV1().Services("default").ProxyGet("http", "whisk-static", "80", "/", nil).DoRaw(ctx)
	if err != nil || !strings.Contains(string(page), "<h1>whisk</h1>") {
		t.Errorf("GET whisk-static:80/ = %q, %v", page, err)
	}
	if t.Failed() {
		return
	}

	// dtest on the same cluster: operator, instance, assertions (every enabled component Ready),
	// destroy, nothing leaked
	out := run("nuv dtest", func(env *cli.Env) error { return testverbs.DtestCommand().Run(ctx, env, nil) })
	if !strings.Contains(out, "dtest: passed") {
		t.Errorf("dtest did not pass:\n%s", out)
	}
}

// waitReady waits until pod name in default is a new pod, Running and Ready.
func waitReady(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning &&
			len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not Running and Ready again after 2m (%v)", name, err)
		}
		time.Sleep(time.Second)
	}
}

// runJob runs command in image as a Job in default and waits for it to succeed.
func runJob(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, image string, command []string) {
	t.Helper()
	backoff := int32(0)
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"nuv.dev/test": name}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: image, Command: command, ImagePullPolicy: corev1.PullNever}}}}}}
	if _, err := cs.BatchV1().Jobs("default").Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bg := metav1.DeletePropagationBackground
	defer cs.BatchV1().Jobs("default").Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &bg})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cur, err := cs.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cur.Status.Succeeded > 0 || cur.Status.Failed > 0 || time.Now().After(deadline) {
			logs := jobLogs(ctx, cs, name)
			if cur.Status.Succeeded == 0 {
				t.Errorf("job %s did not succeed (failed %d):\n%s", name, cur.Status.Failed, logs)
			} else {
				t.Logf("job %s succeeded:\n%s", name, logs)
			}
			return
		}
		time.Sleep(time.Second)
	}
}

func jobLogs(ctx context.Context, cs kubernetes.Interface, job string) string {
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "nuv.dev/test=" + job})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		raw, err := cs.CoreV1().Pods("default").GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		fmt.Fprintf(&b, "pod %s (%s): %s %v\n", p.Name, p.Status.Phase, raw, err)
	}
	return b.String()
}
