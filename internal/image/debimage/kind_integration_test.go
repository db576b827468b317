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
// through its Service, the controller's API (nuv's whisk-controller) answering, keeping actions in
// CouchDB across a restart of its pod and throttling in Redis (checkController), and then `nuv
// dtest` passing on the cluster. The operator runs in a real pod from the image `nuv image load`
// built and loaded through kind's node loading, its container Ready and never restarted, its log
// showing its workers started (the test of the operator on kind: a kind cluster costs a minute of
// both cores, the repository boots one for the operator and its workload).
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
	var stderr string // of the last run
	run := func(what string, fn func(env *cli.Env) error) string {
		t.Helper()
		var out, errb bytes.Buffer
		env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 1), Getenv: getenv, Dir: project}
		start := time.Now()
		if err := fn(env); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", what, err, out.String(), errb.String())
		}
		t.Logf("%s in %.1fs:\n%s%s", what, time.Since(start).Seconds(), out.String(), errb.String())
		stderr = errb.String()
		return out.String()
	}
	// build-and-load: the operator image built and loaded through kind's node loading
	ref := strings.TrimSpace(run("nuv image load", func(env *cli.Env) error { return imagecmd.Run(ctx, env, []string{"load"}) }))
	if !strings.Contains(stderr, "loaded "+ref+" into kind node "+name+"-control-plane") {
		t.Errorf("the operator image was not loaded through kind's node loading:\n%s", stderr)
	}
	refs := run("nuv image workload --load", func(env *cli.Env) error { return imagecmd.Run(ctx, env, []string{"workload", "--load"}) })
	for _, n := range debimage.WorkloadNames() {
		if ref := debimage.Workload()[n].Ref(); !strings.Contains(refs, ref) {
			t.Errorf("nuv image workload did not print %s:\n%s", ref, refs)
		}
	}

	o := deploy.Options{Project: project, Home: home, Timeout: 4 * time.Minute, Log: localtest.Logger(t), Getenv: getenv}
	if out := run("nuv operator", func(env *cli.Env) error { o.Out = env.Out; return deploy.Operator(ctx, o) }); !strings.Contains(out, "operator image: "+ref+" (from build-and-load") {
		t.Errorf("the operator was not deployed from the loaded image:\n%s", out)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(project, "clusters", name+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	op := checkOperatorPod(t, ctx, cs, ref)
	run("nuv instance", func(env *cli.Env) error { o.Out = env.Out; return deploy.Instance(ctx, o) })
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

	// The stores take only clients with the credentials of the Whisk's store Secret: another pod
	// writing straight into Redis or CouchDB (around whisk-controller's auth) is refused.
	fromStore := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "whisk-store-auth"}, Key: key}}}
	}
	runJob(t, ctx, cs, "redis-anonymous", debimage.Redis().Ref(), []string{"sh", "-c",
		`out=$(redis-cli -h whisk-redis SET nuv-anon x 2>&1); echo "$out"; echo "$out" | grep -q NOAUTH`})
	// redis stores and returns a value for a client in another pod with the password, through its
	// Service's DNS name
	runJob(t, ctx, cs, "redis-client", debimage.Redis().Ref(), []string{"sh", "-c",
		`set -e; export REDISCLI_AUTH="$REDIS_PASSWORD"; redis-cli -h whisk-redis SET nuv-check "$(hostname)" | grep -qx OK; test "$(redis-cli -h whisk-redis GET nuv-check)" = "$(hostname)"; redis-cli -h whisk-redis CONFIG GET dir; ` +
			`test "$(REDISCLI_AUTH= redis-cli -h whisk-redis EXISTS nuv-anon 2>&1 | grep -c NOAUTH)" = 1; test "$(redis-cli -h whisk-redis EXISTS nuv-anon)" = 0`},
		fromStore("REDIS_PASSWORD", "redis-password"))
	// the CouchDB-compatible server: an anonymous write is refused (401); the init Job made the
	// Whisk's databases; a client with the admin's credentials stores a document and reads it back
	runJob(t, ctx, cs, "couchdb-anonymous", debimage.CouchDB().Ref(), []string{"sh", "-c",
		`u=http://whisk-couchdb:5984; until curl -sf $u/ >/dev/null; do sleep 1; done; ` +
			`code=$(curl -s -o /dev/stderr -w '%{http_code}' -X PUT -H 'Content-Type: application/json' -d '{"exec":{"kind":"nodejs","code":"evil"}}' $u/whisks/nuv-anon); ` +
			`echo "anonymous write: HTTP $code"; test "$code" = 401`})
	runJob(t, ctx, cs, "couchdb-client", debimage.CouchDB().Ref(), []string{"sh", "-c",
		`set -e; u=http://whisk-couchdb:5984; a="$COUCHDB_USER:$COUCHDB_PASSWORD"; curl -sf -u "$a" $u/_all_dbs | tee /dev/stderr | grep -q '"whisks"'; ` +
			`curl -sf -u "$a" -X PUT -H 'Content-Type: application/json' -d '{"kind":"action","by":"nuv"}' $u/whisks/nuv-check; ` +
			`curl -sf -u "$a" $u/whisks/nuv-check | tee /dev/stderr | grep -q '"by":"nuv"'; ` +
			`test "$(curl -s -o /dev/null -w '%{http_code}' -u "$a" $u/whisks/nuv-anon)" = 404`},
		fromStore("COUCHDB_USER", "couchdb-user"), fromStore("COUCHDB_PASSWORD", "couchdb-password"))
	// the document is on the volume: it outlives the pod
	if err := cs.CoreV1().Pods("default").Delete(ctx, "whisk-couchdb-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ctx, cs, "whisk-couchdb-0")
	runJob(t, ctx, cs, "couchdb-after-restart", debimage.CouchDB().Ref(), []string{"sh", "-c",
		`set -e; until curl -sf http://whisk-couchdb:5984/ >/dev/null; do sleep 1; done; curl -sf -u "$COUCHDB_USER:$COUCHDB_PASSWORD" http://whisk-couchdb:5984/whisks/nuv-check | tee /dev/stderr | grep -q '"by":"nuv"'`},
		fromStore("COUCHDB_USER", "couchdb-user"), fromStore("COUCHDB_PASSWORD", "couchdb-password"))
	checkController(t, ctx, cs)
	// the Deployments were written once: a real API server's defaults (probes, environment from a
	// Secret, pull policy, ...) made the operator's reconciles update nothing
	for _, name := range []string{"whisk-controller", "whisk-static"} {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("deployment %s: %v", name, err)
		} else if d.Generation != 1 {
			t.Errorf("deployment %s: generation %d, want 1 (updated after its creation)", name, d.Generation)
		}
	}
	// nginx serves the Whisk's page through its Service (the API server's service proxy)
	page, err := cs.CoreV1().Services("default").ProxyGet("http", "whisk-static", "80", "/", nil).DoRaw(ctx)
	if err != nil || !strings.Contains(string(page), "<h1>whisk</h1>") {
		t.Errorf("GET whisk-static:80/ = %q, %v", page, err)
	}
	if t.Failed() {
		return
	}

	// the operator started its workers and reconciled without restarting
	logs, err := cs.CoreV1().Pods(op.Namespace).GetLogs(op.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "starting whisk-operator") || !strings.Contains(string(logs), "Starting workers") {
		t.Errorf("the operator's log does not show it starting its workers:\n%s", logs)
	}
	checkOperatorPod(t, ctx, cs, ref)

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

// runJob runs command in image as a Job in default, with env, and waits for it to succeed.
func runJob(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, image string, command []string, env ...corev1.EnvVar) {
	t.Helper()
	backoff := int32(0)
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"nuv.dev/test": name}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: image, Command: command, Env: env, ImagePullPolicy: corev1.PullNever}}}}}}
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

// apiClientScript defines call METHOD PATH WANT [BODY]: a request to the controller's actions
// collection with the namespace's key, its status checked, its body in /tmp/body.
const apiClientScript = `set -eu
u=http://whisk-controller:8080/api/v1/namespaces/_/actions
call() {
  if [ $# -ge 4 ]; then
    code=$(curl -s -o /tmp/body -w '%{http_code}' -u "$WHISK_AUTH" -X "$1" -H 'Content-Type: application/json' -d "$4" "$u$2")
  else
    code=$(curl -s -o /tmp/body -w '%{http_code}' -u "$WHISK_AUTH" -X "$1" "$u$2")
  fi
  echo "$1 $2 -> HTTP $code $(head -c 300 /tmp/body)"
  if [ "$code" != "$3" ]; then echo "want HTTP $3" >&2; exit 1; fi
}
body() { grep -q "$1" /tmp/body || { echo "body lacks $1" >&2; exit 1; }; }
until curl -sf http://whisk-controller:8080/ping >/dev/null; do sleep 1; done
`

// checkController exercises nuv's whisk-controller on the cluster: /ping and /ready through the
// API server's service proxy; then, from a pod with the key of the Secret the operator made, the
// API through the controller's Service (the API server's proxy drops the Authorization header
// once it has authenticated the caller, so basic auth cannot go through it): an action put, read
// back, refused without overwrite (409), updated with it, its invocation refused (501), listed,
// deleted (404 after); an action that outlives the deletion of the controller's pod (it lives in
// CouchDB); the namespace's limit reached (429, counted in Redis).
func checkController(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	svc := cs.CoreV1().Services("default")
	// The controller's readiness probe asks CouchDB: while CouchDB restarts (the test just deleted
	// its pod) the controller leaves the Service's endpoints, and comes back once its probe passes
	// again. Wait for that, then check.
	var ready []byte
	var err error
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		ready, err = svc.ProxyGet("http", "whisk-controller", "8080", "/ready", nil).DoRaw(ctx)
		if err == nil && strings.Contains(string(ready), `"couchdb":"ok"`) && strings.Contains(string(ready), `"redis":"ok"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("GET whisk-controller:8080/ready = %s, %v for 2m (want couchdb and redis ok)", ready, err)
			break
		}
	}
	if pong, err := svc.ProxyGet("http", "whisk-controller", "8080", "/ping", nil).DoRaw(ctx); err != nil || string(pong) != "pong" {
		t.Errorf("GET whisk-controller:8080/ping = %q, %v", pong, err)
	}
	sec, err := cs.CoreV1().Secrets("default").Get(ctx, "whisk-controller-auth", metav1.GetOptions{})
	if err != nil || len(sec.Data["auth"]) == 0 {
		t.Fatalf("the controller's auth secret: %v", err)
	}
	auth := corev1.EnvVar{Name: "WHISK_AUTH", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "whisk-controller-auth"}, Key: "auth"}}}
	code := func(c string) string { return fmt.Sprintf(`{"exec":{"kind":"nodejs:20","code":"%s"}}`, c) }
	image := debimage.CouchDB().Ref() // it has sh and curl
	runJob(t, ctx, cs, "controller-api", image, []string{"sh", "-c", apiClientScript + strings.Join([]string{
		`call PUT /hello 200 '` + code("function main() { return {v: 1} }") + `'; body '"version":"0.0.1"'`,
		`call GET /hello 200; body 'return {v: 1}'`,
		`call PUT /hello 409 '` + code("other") + `'; body '"error":"resource already exists"'`,
		`call PUT '/hello?overwrite=true' 200 '` + code("function main() { return {v: 2} }") + `'; body '"version":"0.0.2"'`,
		`call POST /hello 501; body 'has no invoker'`,
		`call GET '' 200; body '"name":"hello"'`,
		`call DELETE /hello 200`,
		`call DELETE /hello 404; body 'The requested resource does not exist.'`,
		`call GET /hello 404`,
		`call PUT /survivor 200 '` + code("kept in couchdb") + `'`,
	}, "\n")}, auth)
	if t.Failed() {
		return
	}

	// the action lives in CouchDB: it outlives the controller's pod
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=whisk,app.kubernetes.io/component=controller"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("controller pods: %d, %v", len(pods.Items), err)
	}
	old := map[string]bool{}
	for _, p := range pods.Items {
		old[p.Name] = true
		if err := cs.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=whisk,app.kubernetes.io/component=controller"})
		fresh := 0
		if err == nil {
			for _, p := range pods.Items {
				if !old[p.Name] && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning &&
					len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
					fresh++
				}
			}
		}
		if fresh > 0 && err == nil && len(pods.Items) == fresh {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new controller pod Running and Ready 2m after the old one was deleted (%v)", err)
		}
		time.Sleep(time.Second)
	}
	runJob(t, ctx, cs, "controller-api-after-restart", image, []string{"sh", "-c", apiClientScript + strings.Join([]string{
		`call GET /survivor 200; body 'kept in couchdb'`,
		`call DELETE /survivor 200`,
		// tests/kind/whisk.yaml allows 40 requests a minute: at most 81 reach the limit even
		// when a minute ends in between
		`i=0; while [ $i -lt 81 ]; do i=$((i+1)); c=$(curl -s -o /tmp/body -w '%{http_code}' -u "$WHISK_AUTH" "$u"); [ "$c" = 429 ] && break; done`,
		`echo "request $i: HTTP $c $(cat /tmp/body)"; [ "$c" = 429 ]; body '"error":"Too many requests in the last minute (count: 41, allowed: 40)."'; body '"code":"'`,
	}, "\n")}, auth)
}

// checkOperatorPod finds the running operator pod: it runs image ref, its container Ready and
// never restarted.
func checkOperatorPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, ref string) *corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=whisk-operator"})
	if err != nil {
		t.Fatal(err)
	}
	var op *corev1.Pod
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodRunning {
			op = &pods.Items[i]
		}
	}
	if op == nil {
		t.Fatalf("no running operator pod among %d", len(pods.Items))
	}
	if got := op.Spec.Containers[0].Image; got != ref {
		t.Errorf("the operator pod runs %s, want %s", got, ref)
	}
	if st := op.Status.ContainerStatuses; len(st) == 0 || !st[0].Ready || st[0].RestartCount > 0 {
		t.Errorf("operator container not ready or restarted: %+v", st)
	}
	return op
}
