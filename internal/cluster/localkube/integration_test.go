package localkube_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func ptr[T any](v T) *T { return &v }

// TestIntegrationLocalCluster creates one 3-node cluster and checks, through client-go and the
// preinstalled kubectl, that it behaves as a real cluster; then the fault paths; then that delete
// leaves nothing behind.
func TestIntegrationLocalCluster(t *testing.T) {
	// Take the ports from a base one that is already in use: create must skip it.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	home, project := t.TempDir(), t.TempDir()
	p := localkube.Clusters{Home: home, Project: project, Log: localtest.Logger(t), Getenv: os.Getenv}
	ctx := context.Background()
	if testing.Short() {
		t.Skip("needs a local cluster; skipped under -short")
	}
	start := time.Now()
	info, err := p.Create(ctx, localkube.CreateOptions{Name: "it", Nodes: 3, PortBase: busyPort})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Logf("created in %.1fs", time.Since(start).Seconds())
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			if err := p.Delete(context.Background(), "it"); err != nil {
				t.Errorf("clean-up: delete cluster it: %v", err)
			}
		}
	})
	dir := localkube.StateDir(home, "it")
	cfg, err := p.RESTConfig("it")
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	t.Run("ports skip the busy one", func(t *testing.T) {
		if strings.Contains(info.APIURL, ":"+strconv.Itoa(busyPort)) {
			t.Fatalf("API %s uses the busy port %d", info.APIURL, busyPort)
		}
		for _, c := range info.Components {
			if c.Port == busyPort {
				t.Fatalf("%s got the busy port %d", c.Name, busyPort)
			}
		}
	})
	t.Run("kubeconfig", func(t *testing.T) {
		want := filepath.Join(project, "clusters", "it.kubeconfig")
		st, err := os.Stat(want)
		if err != nil || info.Kubeconfig != want {
			t.Fatalf("kubeconfig %q (%v), want %s", info.Kubeconfig, err, want)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("kubeconfig mode %v, want 0600", st.Mode().Perm())
		}
	})
	t.Run("nodes ready and labelled", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 3 {
			t.Fatalf("%d nodes, want 3", len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if n.Labels[cluster.LabelCluster] != "it" || n.Labels[cluster.LabelProvider] != "local" {
				t.Errorf("node %s labels %v", n.Name, n.Labels)
			}
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready {
				t.Errorf("node %s not Ready", n.Name)
			}
		}
		out, err := kubectl(t, info.Kubeconfig, "", "get", "nodes", "--no-headers")
		if err != nil || strings.Count(out, " Ready ") != 3 {
			t.Fatalf("kubectl get nodes: %v\n%s", err, out)
		}
	})
	t.Run("kubectl version parses the server version", func(t *testing.T) {
		out, err := kubectl(t, info.Kubeconfig, "", "version")
		if err != nil || !strings.Contains(out, "Server Version: v1.36.3") {
			t.Fatalf("kubectl version: %v\n%s", err, out)
		}
	})
	t.Run("watches and informers work with the watch cache off", func(t *testing.T) {
		// The API server runs with --watch-cache=false: watches are served by etcd, and an
		// informer's list-then-watch (or watch-list) must still see every change.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
		seen := make(chan string, 8)
		inf := factory.Core().V1().ConfigMaps().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				seen <- cm.Name
			}
		}}); err != nil {
			t.Fatal(err)
		}
		factory.Start(wctx.Done())
		defer factory.Shutdown()
		if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
			t.Fatal("configmap informer never synced")
		}
		list, err := cs.CoreV1().ConfigMaps("default").List(wctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cs.CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		if _, err := cs.CoreV1().ConfigMaps("default").Create(wctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		gotWatch, gotInformer := false, false
		for !gotWatch || !gotInformer {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch closed before the configmap was seen")
				}
				if cm, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == watch.Added && cm.Name == "watched" {
					gotWatch = true
				}
			case name := <-seen:
				gotInformer = gotInformer || name == "watched"
			case <-wctx.Done():
				t.Fatalf("configmap not seen (watch %v, informer %v)", gotWatch, gotInformer)
			}
		}
	})
	t.Run("deployment of 10 replicas becomes available", func(t *testing.T) {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(10)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
				},
			},
		}
		t0 := time.Now()
		if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "deployment available", func() error {
			got, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Status.AvailableReplicas != 10 {
				return fmt.Errorf("available %d/10", got.Status.AvailableReplicas)
			}
			return nil
		})
		t.Logf("10 replicas available in %.1fs", time.Since(t0).Seconds())
		out, err := kubectl(t, info.Kubeconfig, "", "rollout", "status", "deployment/web", "--timeout=30s")
		if err != nil {
			t.Fatalf("kubectl rollout status: %v\n%s", err, out)
		}
		// Garbage collection: deleting the Deployment removes its ReplicaSet and pods.
		if err := cs.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationForeground)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "garbage collection", func() error {
			pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return err
			}
			rs, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return err
			}
			if len(pods.Items)+len(rs.Items) > 0 {
				return fmt.Errorf("%d pods, %d replicasets left", len(pods.Items), len(rs.Items))
			}
			return nil
		})
	})
	t.Run("CRD with status subresource and schema validation", func(t *testing.T) {
		crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.nuv.dev
spec:
  group: example.nuv.dev
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
          status:
            type: object
            properties:
              phase: {type: string}
`
		if out, err := kubectl(t, info.Kubeconfig, crd, "apply", "-f", "-"); err != nil {
			t.Fatalf("kubectl apply CRD: %v\n%s", err, out)
		}
		if out, err := kubectl(t, info.Kubeconfig, "", "wait", "--for=condition=Established", "crd/widgets.example.nuv.dev", "--timeout=30s"); err != nil {
			t.Fatalf("CRD not established: %v\n%s", err, out)
		}
		gvr := schema.GroupVersionResource{Group: "example.nuv.dev", Version: "v1", Resource: "widgets"}
		obj := func(size any) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.nuv.dev/v1", "kind": "Widget",
				"metadata": map[string]any{"name": fmt.Sprintf("w%v", size)},
				"spec":     map[string]any{"size": size},
			}}
		}
		var created *unstructured.Unstructured
		eventually(t, 20*time.Second, "create custom resource", func() error {
			var err error
			created, err = dyn.Resource(gvr).Namespace("default").Create(ctx, obj(int64(3)), metav1.CreateOptions{})
			return err
		})
		if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, obj(int64(42)), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Fatalf("size 42 accepted or wrong error: %v", err)
		}
		// status only changes through the status subresource
		created.Object["status"] = map[string]any{"phase": "Ready"}
		if _, err := dyn.Resource(gvr).Namespace("default").Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, _ := dyn.Resource(gvr).Namespace("default").Get(ctx, "w3", metav1.GetOptions{})
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "" {
			t.Fatalf("status changed through the main resource: %q", phase)
		}
		got.Object["status"] = map[string]any{"phase": "Ready"}
		if _, err := dyn.Resource(gvr).Namespace("default").UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, _ = dyn.Resource(gvr).Namespace("default").Get(ctx, "w3", metav1.GetOptions{})
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
			t.Fatalf("status phase %q after UpdateStatus", phase)
		}
	})
	t.Run("server-side apply detects conflicts", func(t *testing.T) {
		apply := func(manager, value string, force bool) error {
			cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},"data":{"key":%q}}`, value)
			_, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "ssa", types.ApplyPatchType, []byte(cm),
				metav1.PatchOptions{FieldManager: manager, Force: &force})
			return err
		}
		if err := apply("alice", "a", false); err != nil {
			t.Fatal(err)
		}
		if err := apply("bob", "b", false); !apierrors.IsConflict(err) {
			t.Fatalf("want a conflict, got %v", err)
		}
		if err := apply("bob", "b", true); err != nil {
			t.Fatalf("forced apply: %v", err)
		}
	})
	t.Run("RBAC denies an unprivileged ServiceAccount whose token works", func(t *testing.T) {
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "nobody", &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sa := rest.AnonymousClientConfig(cfg)
		sa.BearerToken = tr.Status.Token
		saClient := kubernetes.NewForConfigOrDie(sa)
		who, err := saClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("token rejected: %v", err)
		}
		if u := who.Status.UserInfo.Username; u != "system:serviceaccount:default:nobody" {
			t.Fatalf("authenticated as %q", u)
		}
		if _, err := saClient.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("want Forbidden listing secrets, got %v", err)
		}
		out, _ := kubectl(t, info.Kubeconfig, "", "auth", "can-i", "list", "secrets", "--as=system:serviceaccount:default:nobody")
		if strings.TrimSpace(out) != "no" {
			t.Fatalf("kubectl auth can-i: %q", out)
		}
		// granting a Role makes the same token work
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "nobody-cm"}, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nobody", Namespace: "default"}}}
		if _, err := cs.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "RBAC grant", func() error {
			_, err := saClient.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			return err
		})
	})
	t.Run("namespace deletion waits for finalizers", func(t *testing.T) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"nuv.dev/test"}}}
		if _, err := cs.CoreV1().ConfigMaps("doomed").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "namespace terminating with the held object", func() error {
			ns, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
			if err != nil {
				return err
			}
			got, err := cs.CoreV1().ConfigMaps("doomed").Get(ctx, "held", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if ns.Status.Phase != corev1.NamespaceTerminating || got.DeletionTimestamp == nil {
				return fmt.Errorf("phase %s, configmap deletion %v", ns.Status.Phase, got.DeletionTimestamp)
			}
			return nil
		})
		time.Sleep(time.Second)
		if _, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{}); err != nil {
			t.Fatalf("namespace gone while a finalizer holds an object: %v", err)
		}
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := cs.CoreV1().ConfigMaps("doomed").Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "namespace deleted", func() error {
			_, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there: %v", err)
		})
	})
	t.Run("statefulset with a PVC template becomes ready", func(t *testing.T) {
		ss := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr(int32(2)),
				ServiceName: "db",
				Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres",
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}},
				},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
					},
				}},
			},
		}
		if _, err := cs.AppsV1().StatefulSets("default").Create(ctx, ss, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 90*time.Second, "statefulset ready", func() error {
			got, err := cs.AppsV1().StatefulSets("default").Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Status.ReadyReplicas != 2 {
				return fmt.Errorf("ready %d/2", got.Status.ReadyReplicas)
			}
			return nil
		})
		pvc, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-db-0", metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != corev1.ClaimBound {
			t.Fatalf("pvc data-db-0: %v %v", err, pvc.Status.Phase)
		}
		// nuv's provisioner made the volume (bound to this claim by kube-controller-manager), and
		// takes it away once the claim is gone.
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil || pv.Annotations["pv.kubernetes.io/provisioned-by"] != "nuv.dev/local-path" || pv.Spec.ClaimRef == nil ||
			pv.Spec.ClaimRef.UID != pvc.UID || pv.Status.Phase != corev1.VolumeBound || pv.Spec.Capacity.Storage().String() != "1Gi" {
			t.Fatalf("volume %q of pvc data-db-0: %v %+v", pvc.Spec.VolumeName, err, pv)
		}
		if err := cs.AppsV1().StatefulSets("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"data-db-0", "data-db-1"} {
			if err := cs.CoreV1().PersistentVolumeClaims("default").Delete(ctx, c, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 90*time.Second, "volumes of the deleted claims deleted", func() error {
			pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(pvs.Items) > 0 {
				return fmt.Errorf("%d volume(s) left, the first %s %s", len(pvs.Items), pvs.Items[0].Name, pvs.Items[0].Status.Phase)
			}
			return nil
		})
	})
	t.Run("job completes", func(t *testing.T) {
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "once"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		}
		if _, err := cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out, err := kubectl(t, info.Kubeconfig, "", "wait", "--for=condition=Complete", "job/once", "--timeout=60s")
		if err != nil {
			t.Fatalf("job not complete: %v\n%s", err, out)
		}
	})
	t.Run("service gets a ClusterIP", func(t *testing.T) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
		got, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ip := net.ParseIP(got.Spec.ClusterIP); ip == nil || !strings.HasPrefix(got.Spec.ClusterIP, "10.96.") {
			t.Fatalf("ClusterIP %q", got.Spec.ClusterIP)
		}
	})
	t.Run("create with an existing name fails and leaves the cluster alone", func(t *testing.T) {
		before, _ := os.ReadFile(filepath.Join(dir, "state.json"))
		_, err := p.Create(ctx, localkube.CreateOptions{Name: "it"})
		if !errors.Is(err, cluster.ErrExists) {
			t.Fatalf("want ErrExists, got %v", err)
		}
		after, _ := os.ReadFile(filepath.Join(dir, "state.json"))
		if string(before) != string(after) {
			t.Fatal("state.json changed")
		}
		st, _ := p.Status(ctx, "it")
		if st.Status != cluster.Running {
			t.Fatalf("status %s after failed create", st.Status)
		}
	})
	t.Run("killed component shows degraded and start repairs it", func(t *testing.T) {
		pid := readPIDFile(t, filepath.Join(dir, "pids", "kube-scheduler.pid"))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "degraded", func() error {
			infos, err := p.List(ctx)
			if err != nil {
				return err
			}
			if len(infos) != 1 || infos[0].Status != cluster.Degraded {
				return fmt.Errorf("list: %+v", infos)
			}
			return nil
		})
		if err := p.Start(ctx, "it"); err != nil {
			t.Fatalf("start: %v", err)
		}
		st, _ := p.Status(ctx, "it")
		if st.Status != cluster.Running || st.NodesReady != 3 {
			t.Fatalf("after start: %s, %d nodes ready", st.Status, st.NodesReady)
		}
	})
	t.Run("stop keeps data, start brings it back", func(t *testing.T) {
		if err := p.Stop(ctx, "it"); err != nil {
			t.Fatal(err)
		}
		st, _ := p.Status(ctx, "it")
		if st.Status != cluster.Stopped {
			t.Fatalf("after stop: %s", st.Status)
		}
		// Another program takes the apiserver's port while the cluster is stopped.
		thief, err := net.Listen("tcp", strings.TrimPrefix(st.APIURL, "https://"))
		if err != nil {
			t.Fatalf("take the apiserver port: %v", err)
		}
		defer thief.Close()
		// Ensure (what `nuv up` uses) starts the stopped cluster instead of creating one.
		got, err := p.Ensure(ctx, localkube.CreateOptions{Name: "it", Nodes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != cluster.Running || got.Nodes != 3 || got.NodesReady != 3 {
			t.Fatalf("after Ensure: %s, %d/%d nodes", got.Status, got.NodesReady, got.Nodes)
		}
		if got.APIURL == st.APIURL {
			t.Fatalf("apiserver kept its taken port %s", st.APIURL)
		}
		out, err := kubectl(t, got.Kubeconfig, "", "get", "configmap", "ssa", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "configmap/ssa" {
			t.Fatalf("kubeconfig not moved to the new port: %v\n%s", err, out)
		}
		cfg, err := p.RESTConfig("it")
		if err != nil {
			t.Fatal(err)
		}
		cs = kubernetes.NewForConfigOrDie(cfg)
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "ssa", metav1.GetOptions{}); err != nil {
			t.Fatalf("data lost across stop/start: %v", err)
		}
	})
	t.Run("delete leaves no process, state or kubeconfig", func(t *testing.T) {
		// A process another part of nuv registered for the cluster (the operator run on the host).
		op := exec.Command("sleep", "600")
		if err := op.Start(); err != nil {
			t.Fatal(err)
		}
		go op.Wait()
		if err := localkube.RegisterProcess(home, "it", "operator", op.Process.Pid); err != nil {
			t.Fatal(err)
		}
		var pids []int
		files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
		for _, f := range files {
			pids = append(pids, readPIDFile(t, f))
		}
		if len(pids) < 6 {
			t.Fatalf("%d recorded pids, want >= 6 (5 components and the operator)", len(pids))
		}
		if err := p.Delete(ctx, "it"); err != nil {
			t.Fatal(err)
		}
		deleted = true
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); err == nil {
				if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(st), ") Z") {
					t.Errorf("process %d still running", pid)
				}
			}
		}
		if left := procsMentioning(dir); len(left) > 0 {
			t.Errorf("processes still mention %s: %v", dir, left)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state dir remains: %v", err)
		}
		if _, err := os.Stat(info.Kubeconfig); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("kubeconfig remains: %v", err)
		}
		if err := p.Delete(ctx, "it"); !errors.Is(err, cluster.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}
