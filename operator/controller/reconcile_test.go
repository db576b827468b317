package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	whiskv1 "github.com/nuv-dev/nuv/operator/api/v1alpha1"
)

const ns = "demo"

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := whiskv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func allOn() *whiskv1.Whisk {
	return &whiskv1.Whisk{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns, Generation: 1},
		Spec: whiskv1.WhiskSpec{
			Controller: whiskv1.ControllerSpec{Enabled: true},
			Redis:      whiskv1.StoreSpec{Enabled: true, Storage: "2Gi", StorageClass: "fast"},
			CouchDB:    whiskv1.StoreSpec{Enabled: true},
			Static:     whiskv1.StaticSpec{Enabled: true, Port: 8080},
		},
	}
}

type harness struct {
	t *testing.T
	c client.Client
	r *WhiskReconciler
}

func newHarness(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) *harness {
	s := newScheme(t)
	b := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&whiskv1.Whisk{}).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	c := b.Build()
	return &harness{t: t, c: c, r: &WhiskReconciler{Client: c, Scheme: s}}
}

func (h *harness) reconcile() (ctrl.Result, error) {
	return h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "w"}})
}

func (h *harness) whisk() *whiskv1.Whisk {
	w := &whiskv1.Whisk{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "w"}, w); err != nil {
		h.t.Fatalf("get whisk: %v", err)
	}
	return w
}

func (h *harness) exists(obj client.Object, name string) bool {
	err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatalf("get %s: %v", name, err)
	}
	return err == nil
}

// markReady sets the status the cluster's controllers would write once everything rolled out.
func (h *harness) markReady() {
	ctx := context.Background()
	for _, name := range []string{"w-controller", "w-static"} {
		d := &appsv1.Deployment{}
		if !h.exists(d, name) {
			continue
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		if err := h.c.Status().Update(ctx, d); err != nil {
			h.t.Fatal(err)
		}
	}
	for _, name := range []string{"w-redis", "w-couchdb"} {
		s := &appsv1.StatefulSet{}
		if !h.exists(s, name) {
			continue
		}
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}
		if err := h.c.Status().Update(ctx, s); err != nil {
			h.t.Fatal(err)
		}
	}
	j := &batchv1.Job{}
	if h.exists(j, "w-couchdb-init") {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		if err := h.c.Status().Update(ctx, j); err != nil {
			h.t.Fatal(err)
		}
	}
}

func condition(w *whiskv1.Whisk, typ string) *metav1.Condition {
	return meta.FindStatusCondition(w.Status.Conditions, typ)
}

func TestReconcileCreatesEveryEnabledComponent(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	w := h.whisk()
	if len(w.Finalizers) != 1 || w.Finalizers[0] != whiskv1.Finalizer {
		t.Fatalf("finalizers = %v", w.Finalizers)
	}
	for _, tc := range []struct {
		obj  client.Object
		name string
	}{
		{&appsv1.Deployment{}, "w-controller"},
		{&corev1.Service{}, "w-controller"},
		{&corev1.Secret{}, "w-controller-auth"},
		{&appsv1.Deployment{}, "w-static"},
		{&corev1.Service{}, "w-static"},
		{&appsv1.StatefulSet{}, "w-redis"},
		{&corev1.Service{}, "w-redis"},
		{&appsv1.StatefulSet{}, "w-couchdb"},
		{&corev1.Service{}, "w-couchdb"},
		{&batchv1.Job{}, "w-couchdb-init"},
	} {
		if !h.exists(tc.obj, tc.name) {
			t.Errorf("%T %s not created", tc.obj, tc.name)
			continue
		}
		if !metav1.IsControlledBy(tc.obj, w) {
			t.Errorf("%T %s not owned by the Whisk", tc.obj, tc.name)
		}
		if tc.obj.GetLabels()[LabelManagedBy] != ManagedByValue || tc.obj.GetLabels()[LabelInstance] != "w" {
			t.Errorf("%T %s labels = %v", tc.obj, tc.name, tc.obj.GetLabels())
		}
	}
	initJob := &batchv1.Job{}
	h.exists(initJob, "w-couchdb-init")
	if cmd := initJob.Spec.Template.Spec.Containers[0].Command; len(cmd) != 3 || cmd[0] != "sh" ||
		!strings.Contains(cmd[2], "url=http://w-couchdb:5984\n") || !strings.Contains(cmd[2], "for db in _users _replicator whisks activations subjects;") {
		t.Errorf("init job command = %q", cmd)
	}
	redis := &appsv1.StatefulSet{}
	h.exists(redis, "w-redis")
	claim := redis.Spec.VolumeClaimTemplates[0]
	if got := claim.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "2Gi" {
		t.Errorf("redis storage = %s, want 2Gi", got.String())
	}
	if claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != "fast" {
		t.Errorf("redis storage class = %v, want fast", claim.Spec.StorageClassName)
	}
	couch := &appsv1.StatefulSet{}
	h.exists(couch, "w-couchdb")
	if couch.Spec.VolumeClaimTemplates[0].Spec.StorageClassName != nil {
		t.Error("couchdb without a storage class got one (want the cluster default)")
	}
	if claim.Labels[LabelComponent] != "redis" {
		t.Errorf("PVC template labels = %v", claim.Labels)
	}
	svc := &corev1.Service{}
	h.exists(svc, "w-redis")
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("redis service is not headless: %q", svc.Spec.ClusterIP)
	}
	h.exists(svc, "w-static")
	if svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("static port = %d", svc.Spec.Ports[0].Port)
	}
	static := &appsv1.Deployment{}
	h.exists(static, "w-static")
	if env := static.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Name != "PORT" || env[0].Value != "8080" {
		t.Errorf("static container env = %+v, want PORT=8080 (its server's port)", env)
	}
	for _, typ := range []string{whiskv1.ConditionReady, whiskv1.ConditionControllerReady, whiskv1.ConditionRedisReady, whiskv1.ConditionCouchDBReady, whiskv1.ConditionStaticReady} {
		c := condition(w, typ)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonProgressing {
			t.Errorf("%s = %+v, want False/Progressing before the rollout", typ, c)
		}
	}
}

func TestReconcileReportsReadyOnceRolledOut(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.markReady()
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	w := h.whisk()
	for _, typ := range []string{whiskv1.ConditionReady, whiskv1.ConditionControllerReady, whiskv1.ConditionRedisReady, whiskv1.ConditionCouchDBReady, whiskv1.ConditionStaticReady} {
		if c := condition(w, typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("%s = %+v, want True", typ, c)
		}
	}
	if w.Status.ObservedGeneration != w.Generation {
		t.Errorf("observedGeneration = %d, want %d", w.Status.ObservedGeneration, w.Generation)
	}
	// A further reconcile with nothing new writes nothing.
	before := map[string]string{}
	for _, name := range []string{"w-controller", "w-static"} {
		d := &appsv1.Deployment{}
		h.exists(d, name)
		before[name] = d.ResourceVersion
	}
	before["whisk"] = w.ResourceVersion
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"w-controller", "w-static"} {
		d := &appsv1.Deployment{}
		h.exists(d, name)
		if d.ResourceVersion != before[name] {
			t.Errorf("deployment %s rewritten by an idle reconcile", name)
		}
	}
	if h.whisk().ResourceVersion != before["whisk"] {
		t.Error("whisk rewritten by an idle reconcile")
	}
}

func TestReconcileRemovesComponentsTurnedOff(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	// The StatefulSet controller would create this claim from the template.
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-w-redis-0", Namespace: ns,
		Labels: map[string]string{LabelManagedBy: ManagedByValue, LabelInstance: "w", LabelComponent: "redis"}}}
	if err := h.c.Create(context.Background(), pvc); err != nil {
		t.Fatal(err)
	}
	w := h.whisk()
	w.Spec.Redis.Enabled = false
	w.Spec.Static.Enabled = false
	if err := h.c.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		obj  client.Object
		name string
	}{
		{&appsv1.StatefulSet{}, "w-redis"}, {&corev1.Service{}, "w-redis"}, {&corev1.PersistentVolumeClaim{}, "data-w-redis-0"},
		{&appsv1.Deployment{}, "w-static"}, {&corev1.Service{}, "w-static"},
	} {
		if h.exists(tc.obj, tc.name) {
			t.Errorf("%T %s still exists after its component was turned off", tc.obj, tc.name)
		}
	}
	if !h.exists(&appsv1.StatefulSet{}, "w-couchdb") || !h.exists(&appsv1.Deployment{}, "w-controller") {
		t.Error("a component still enabled was removed")
	}
	w = h.whisk()
	if condition(w, whiskv1.ConditionRedisReady) != nil || condition(w, whiskv1.ConditionStaticReady) != nil {
		t.Errorf("conditions of disabled components kept: %+v", w.Status.Conditions)
	}
}

func TestReconcileRollsOutSpecChanges(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	w := h.whisk()
	three := int32(3)
	w.Spec.Controller.Image = "example.com/controller:v2"
	w.Spec.Controller.Replicas = &three
	w.Spec.CouchDB.Image = "couchdb:3.4"
	if err := h.c.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	res, err := h.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	h.exists(d, "w-controller")
	if d.Spec.Template.Spec.Containers[0].Image != "example.com/controller:v2" || *d.Spec.Replicas != 3 {
		t.Errorf("controller not rolled out: image %s replicas %d", d.Spec.Template.Spec.Containers[0].Image, *d.Spec.Replicas)
	}
	s := &appsv1.StatefulSet{}
	h.exists(s, "w-couchdb")
	if s.Spec.Template.Spec.Containers[0].Image != "couchdb:3.4" {
		t.Errorf("couchdb image = %s", s.Spec.Template.Spec.Containers[0].Image)
	}
	// The init Job's template is immutable: it is replaced, and the reconcile comes back for it.
	if h.exists(&batchv1.Job{}, "w-couchdb-init") {
		t.Error("init job with the old template not deleted")
	}
	if res.RequeueAfter == 0 {
		t.Error("no requeue while the init job is replaced")
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	j := &batchv1.Job{}
	if !h.exists(j, "w-couchdb-init") || j.Spec.Template.Spec.Containers[0].Image != "couchdb:3.4" {
		t.Error("init job not recreated with the new image")
	}
}

func TestReconcileFinalizerCleansUp(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-w-couchdb-0", Namespace: ns,
		Labels: map[string]string{LabelManagedBy: ManagedByValue, LabelInstance: "w", LabelComponent: "couchdb"}}}
	other := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns,
		Labels: map[string]string{LabelInstance: "w"}}}
	for _, o := range []client.Object{pvc, other} {
		if err := h.c.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.c.Delete(context.Background(), h.whisk()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.exists(&whiskv1.Whisk{}, "w") {
		t.Error("whisk still there: finalizer not removed")
	}
	for _, name := range []string{"w-redis", "w-couchdb"} {
		if h.exists(&appsv1.StatefulSet{}, name) {
			t.Errorf("statefulset %s left behind", name)
		}
	}
	if h.exists(&appsv1.Deployment{}, "w-controller") || h.exists(&batchv1.Job{}, "w-couchdb-init") || h.exists(&corev1.Service{}, "w-static") ||
		h.exists(&corev1.Service{}, "w-controller") || h.exists(&corev1.Secret{}, "w-controller-auth") ||
		h.exists(&corev1.Secret{}, "w-store-auth") {
		t.Error("objects left behind after delete")
	}
	if h.exists(&corev1.PersistentVolumeClaim{}, "data-w-couchdb-0") {
		t.Error("PVC left behind after delete")
	}
	if !h.exists(&corev1.PersistentVolumeClaim{}, "someone-elses") {
		t.Error("deleted a PVC the operator did not create")
	}
}

func TestReconcileReportsFailuresInStatus(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "w-redis",
		errors.New(`User "system:serviceaccount:nuv-system:whisk-operator" cannot create resource "statefulsets"`))
	funcs := &interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*appsv1.StatefulSet); ok {
			return forbidden
		}
		return c.Create(ctx, obj, opts...)
	}}
	h := newHarness(t, funcs, allOn())
	_, err := h.reconcile()
	if err == nil || !apierrors.IsForbidden(errors.Unwrap(errors.Unwrap(err))) && !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("reconcile error = %v, want the forbidden error", err)
	}
	w := h.whisk()
	for _, typ := range []string{whiskv1.ConditionReady, whiskv1.ConditionRedisReady} {
		c := condition(w, typ)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonReconcileError || !strings.Contains(c.Message, "system:serviceaccount:nuv-system:whisk-operator") {
			t.Errorf("%s = %+v, want False/ReconcileError naming the ServiceAccount", typ, c)
		}
	}
	if c := condition(w, whiskv1.ConditionControllerReady); c == nil || c.Reason != ReasonProgressing {
		t.Errorf("an unaffected component reported %+v", c)
	}
}

func TestReconcileRejectsBadStorage(t *testing.T) {
	w := allOn()
	w.Spec.Redis.Storage = "lots"
	h := newHarness(t, nil, w)
	if _, err := h.reconcile(); err == nil {
		t.Fatal("bad storage accepted")
	}
	c := condition(h.whisk(), whiskv1.ConditionRedisReady)
	if c == nil || c.Reason != ReasonReconcileError || !strings.Contains(c.Message, `"lots"`) {
		t.Errorf("RedisReady = %+v", c)
	}
}

func TestReconcileWithNothingEnabledIsReady(t *testing.T) {
	h := newHarness(t, nil, &whiskv1.Whisk{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}})
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if c := condition(h.whisk(), whiskv1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonNoComponents {
		t.Errorf("Ready = %+v", c)
	}
}

func TestReconcileIgnoresMissingWhisk(t *testing.T) {
	h := newHarness(t, nil)
	if res, err := h.reconcile(); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("got %v %v", res, err)
	}
}

func envOf(ct corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range ct.Env {
		m[e.Name] = e
	}
	return m
}

func TestReconcileWiresTheController(t *testing.T) {
	w := allOn()
	w.Spec.Controller.RequestsPerMinute = 30
	h := newHarness(t, nil, w)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	h.exists(d, "w-controller")
	ct := d.Spec.Template.Spec.Containers[0]
	if ct.Image != DefaultControllerImage || DefaultControllerImage != "nuv.dev/whisk-controller:v1" {
		t.Errorf("controller image = %s, want nuv's whisk-controller", ct.Image)
	}
	env := envOf(ct)
	for k, v := range map[string]string{"PORT": "8080", "WHISK_COUCHDB_URL": "http://w-couchdb:5984", "WHISK_DB": "whisks",
		"WHISK_REDIS_ADDR": "w-redis:6379", "WHISK_REQUESTS_PER_MINUTE": "30"} {
		if env[k].Value != v {
			t.Errorf("env %s = %q, want %q", k, env[k].Value, v)
		}
	}
	if ref := env["WHISK_AUTH"].ValueFrom; ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "w-controller-auth" || ref.SecretKeyRef.Key != "auth" || env["WHISK_AUTH"].Value != "" {
		t.Errorf("WHISK_AUTH = %+v, want a reference to secret w-controller-auth key auth", env["WHISK_AUTH"])
	}
	for _, tc := range []struct {
		probe *corev1.Probe
		path  string
	}{{ct.ReadinessProbe, "/ready"}, {ct.LivenessProbe, "/ping"}} {
		if tc.probe == nil || tc.probe.HTTPGet == nil || tc.probe.HTTPGet.Path != tc.path || tc.probe.HTTPGet.Port.String() != "main" {
			t.Errorf("probe %s = %+v", tc.path, tc.probe)
		}
	}
	sec := &corev1.Secret{}
	if !h.exists(sec, "w-controller-auth") || !metav1.IsControlledBy(sec, h.whisk()) {
		t.Fatal("auth secret not created, or not owned by the Whisk")
	}
	key := string(sec.Data["auth"])
	user, pass, ok := strings.Cut(key, ":")
	if !ok || len(user) != 36 || user[14] != '4' || len(pass) != 64 {
		t.Errorf("API key %q is not <uuid v4>:<64 characters>", key)
	}
	// the key is made once: a second reconcile keeps it
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.exists(sec, "w-controller-auth")
	if string(sec.Data["auth"]) != key {
		t.Error("the API key changed on a second reconcile")
	}

	// without redis and couchdb the controller is told of neither
	w = h.whisk()
	w.Spec.Redis.Enabled, w.Spec.CouchDB.Enabled, w.Spec.Controller.RequestsPerMinute = false, false, 0
	if err := h.c.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.exists(d, "w-controller")
	env = envOf(d.Spec.Template.Spec.Containers[0])
	for _, k := range []string{"WHISK_COUCHDB_URL", "WHISK_REDIS_ADDR", "WHISK_REQUESTS_PER_MINUTE"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s set with its component off: %+v", k, env[k])
		}
	}

	// the controller turned off: its Deployment and the Secret the operator made go
	w = h.whisk()
	w.Spec.Controller.Enabled = false
	if err := h.c.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.exists(&corev1.Secret{}, "w-controller-auth") || h.exists(&appsv1.Deployment{}, "w-controller") || h.exists(&corev1.Service{}, "w-controller") {
		t.Error("controller objects left behind after it was turned off")
	}
}

func TestReconcileUsesTheNamedAuthSecret(t *testing.T) {
	w := allOn()
	w.Spec.Controller.AuthSecret = "my-key"
	h := newHarness(t, nil, w)
	if _, err := h.reconcile(); err == nil {
		t.Fatal("a missing spec.controller.authSecret was accepted")
	}
	c := condition(h.whisk(), whiskv1.ConditionControllerReady)
	if c == nil || c.Reason != ReasonReconcileError || !strings.Contains(c.Message, "secret my-key (spec.controller.authSecret) not found in namespace demo") {
		t.Errorf("ControllerReady = %+v", c)
	}
	mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "my-key", Namespace: ns}, Data: map[string][]byte{"other": []byte("x")}}
	if err := h.c.Create(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err == nil || !strings.Contains(err.Error(), `secret my-key has no key "auth"`) {
		t.Fatalf("a secret without the key: %v", err)
	}
	mine.Data = map[string][]byte{"auth": []byte("23bc46b1-71f6-4ed5-8c54-816aa4f8c502:" + strings.Repeat("k", 64))}
	if err := h.c.Update(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	h.exists(d, "w-controller")
	if ref := envOf(d.Spec.Template.Spec.Containers[0])["WHISK_AUTH"].ValueFrom.SecretKeyRef; ref.Name != "my-key" {
		t.Errorf("WHISK_AUTH from %s, want my-key", ref.Name)
	}
	if h.exists(&corev1.Secret{}, "w-controller-auth") {
		t.Error("a key was generated although the spec names one")
	}
	// the user's Secret survives the Whisk
	if err := h.c.Delete(context.Background(), h.whisk()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.exists(&corev1.Secret{}, "my-key") {
		t.Error("the finalizer deleted a Secret the operator did not make")
	}
}

// TestReconcileIgnoresServerDefaults: what the API server adds to a pod template (pull policy,
// termination message, DNS policy, ...) makes no update.
func TestReconcileIgnoresServerDefaults(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"w-controller", "w-static"} {
		d := &appsv1.Deployment{}
		h.exists(d, name)
		ps := &d.Spec.Template.Spec
		ps.RestartPolicy, ps.DNSPolicy, ps.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
		ps.SecurityContext = &corev1.PodSecurityContext{}
		ct := &ps.Containers[0]
		ct.ImagePullPolicy, ct.TerminationMessagePath, ct.TerminationMessagePolicy = corev1.PullIfNotPresent, "/dev/termination-log", corev1.TerminationMessageReadFile
		if err := h.c.Update(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]string{}
	for _, name := range []string{"w-controller", "w-static"} {
		d := &appsv1.Deployment{}
		h.exists(d, name)
		before[name] = d.ResourceVersion
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	for name, rv := range before {
		d := &appsv1.Deployment{}
		h.exists(d, name)
		if d.ResourceVersion != rv {
			t.Errorf("deployment %s updated by a reconcile after only server defaults were added", name)
		}
	}
}

// TestReconcileSecuresTheStores: the operator makes one Secret of store credentials per Whisk
// (random, kept across reconciles), and wires it into Redis (requirepass), CouchDB (its admin),
// the init Job (which creates the databases as that admin) and the controller (AUTH, basic auth),
// each as a Secret reference, never as a value in a spec.
func TestReconcileSecuresTheStores(t *testing.T) {
	h := newHarness(t, nil, allOn())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if !h.exists(sec, "w-store-auth") || !metav1.IsControlledBy(sec, h.whisk()) {
		t.Fatal("store secret w-store-auth not created, or not owned by the Whisk")
	}
	redisPass, couchUser, couchPass := string(sec.Data["redis-password"]), string(sec.Data["couchdb-user"]), string(sec.Data["couchdb-password"])
	if len(redisPass) != 32 || len(couchPass) != 32 || couchUser != "whisk-admin" || redisPass == couchPass {
		t.Fatalf("store secret: redis password of %d characters, couchdb %q with a password of %d", len(redisPass), couchUser, len(couchPass))
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.exists(sec, "w-store-auth")
	if string(sec.Data["redis-password"]) != redisPass || string(sec.Data["couchdb-password"]) != couchPass {
		t.Fatal("the store passwords changed on a second reconcile")
	}
	fromSecret := func(what string, e corev1.EnvVar, key string) {
		t.Helper()
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "w-store-auth" || e.ValueFrom.SecretKeyRef.Key != key {
			t.Errorf("%s %s = %+v, want a reference to secret w-store-auth key %s", what, e.Name, e, key)
		}
	}
	redis := &appsv1.StatefulSet{}
	h.exists(redis, "w-redis")
	rc := redis.Spec.Template.Spec.Containers[0]
	fromSecret("redis", envOf(rc)["REDIS_PASSWORD"], "redis-password")
	if strings.Join(rc.Args, " ") != "--requirepass $(REDIS_PASSWORD)" {
		t.Errorf("redis args %q, want --requirepass $(REDIS_PASSWORD)", rc.Args)
	}
	couch := &appsv1.StatefulSet{}
	h.exists(couch, "w-couchdb")
	ce := envOf(couch.Spec.Template.Spec.Containers[0])
	fromSecret("couchdb", ce["COUCHDB_USER"], "couchdb-user")
	fromSecret("couchdb", ce["COUCHDB_PASSWORD"], "couchdb-password")
	job := &batchv1.Job{}
	h.exists(job, "w-couchdb-init")
	jc := job.Spec.Template.Spec.Containers[0]
	je := envOf(jc)
	fromSecret("init job", je["COUCHDB_USER"], "couchdb-user")
	fromSecret("init job", je["COUCHDB_PASSWORD"], "couchdb-password")
	if script := strings.Join(jc.Command, " "); strings.Count(script, `-u "$auth"`) < 4 || strings.Contains(script, couchPass) {
		t.Errorf("init job script does not authenticate each call, or holds the password:\n%s", script)
	}
	ctl := &appsv1.Deployment{}
	h.exists(ctl, "w-controller")
	ke := envOf(ctl.Spec.Template.Spec.Containers[0])
	fromSecret("controller", ke["WHISK_REDIS_PASSWORD"], "redis-password")
	fromSecret("controller", ke["WHISK_COUCHDB_USER"], "couchdb-user")
	fromSecret("controller", ke["WHISK_COUCHDB_PASSWORD"], "couchdb-password")

	// a Secret that lost a key is an error naming it, not silently replaced
	delete(sec.Data, "redis-password")
	if err := h.c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err == nil || !strings.Contains(err.Error(), `secret w-store-auth has no key "redis-password"`) {
		if c := condition(h.whisk(), whiskv1.ConditionRedisReady); c == nil || !strings.Contains(c.Message, `no key "redis-password"`) {
			t.Errorf("reconcile with a broken store secret: %v, redis condition %+v", err, c)
		}
	}
}
