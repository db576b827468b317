package controller

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	whiskv1 "github.com/nuv-dev/nuv/operator/api/v1alpha1"
)

// Condition reasons.
const (
	ReasonReady          = "Ready"
	ReasonProgressing    = "Progressing"
	ReasonReconcileError = "ReconcileError"
	ReasonNoComponents   = "NoComponents"
)

// WhiskReconciler reconciles Whisk objects.
type WhiskReconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder // may be nil
}

// SetupWithManager registers the reconciler: it watches Whisks and the objects they own.
func (r *WhiskReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&whiskv1.Whisk{}).
		Owns(&appsv1.Deployment{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&batchv1.Job{}).
		Owns(&corev1.Service{}).
		Complete(r)
}

// componentState is the outcome of reconciling one enabled component.
type componentState struct {
	ready   bool
	message string
	requeue bool
}

// Reconcile brings one Whisk's components to its spec and records what it saw in status.
func (r *WhiskReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &whiskv1.Whisk{}
	if err := r.Client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, w)
	}
	if controllerutil.AddFinalizer(w, whiskv1.Finalizer) {
		if err := r.Client.Update(ctx, w); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}

	status := w.Status.DeepCopy()
	var errs []error
	var notReady []string
	requeue := false
	enabled := 0
	for _, c := range Components {
		if !c.Enabled(w) {
			if err := r.remove(ctx, w, c, meta.FindStatusCondition(status.Conditions, c.ConditionType()) != nil); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", c, err))
				continue
			}
			meta.RemoveStatusCondition(&status.Conditions, c.ConditionType())
			continue
		}
		enabled++
		st, err := r.ensure(ctx, w, c)
		cond := metav1.Condition{Type: c.ConditionType(), ObservedGeneration: w.Generation}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", c, err))
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonReconcileError, err.Error()
			r.event(w, corev1.EventTypeWarning, ReasonReconcileError, "Reconcile", "%s: %v", c, err)
		case st.ready:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonReady, st.message
		default:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonProgressing, st.message
			notReady = append(notReady, fmt.Sprintf("%s: %s", c, st.message))
		}
		requeue = requeue || st.requeue
		meta.SetStatusCondition(&status.Conditions, cond)
	}

	overall := metav1.Condition{Type: whiskv1.ConditionReady, ObservedGeneration: w.Generation}
	switch {
	case len(errs) > 0:
		overall.Status, overall.Reason, overall.Message = metav1.ConditionFalse, ReasonReconcileError, errors.Join(errs...).Error()
	case len(notReady) > 0:
		overall.Status, overall.Reason, overall.Message = metav1.ConditionFalse, ReasonProgressing, strings.Join(notReady, "; ")
	case enabled == 0:
		overall.Status, overall.Reason, overall.Message = metav1.ConditionTrue, ReasonNoComponents, "no component enabled"
	default:
		overall.Status, overall.Reason, overall.Message = metav1.ConditionTrue, ReasonReady, fmt.Sprintf("%d components ready", enabled)
	}
	meta.SetStatusCondition(&status.Conditions, overall)
	status.ObservedGeneration = w.Generation

	if !statusEqual(&w.Status, status) {
		w.Status = *status
		if err := r.Client.Status().Update(ctx, w); err != nil {
			return ctrl.Result{}, errors.Join(append(errs, fmt.Errorf("update status: %w", err))...)
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, errors.Join(errs...)
	}
	if requeue {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, nil
}

func statusEqual(a, b *whiskv1.WhiskStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for _, ca := range a.Conditions {
		cb := meta.FindStatusCondition(b.Conditions, ca.Type)
		if cb == nil || ca.Status != cb.Status || ca.Reason != cb.Reason || ca.Message != cb.Message || ca.ObservedGeneration != cb.ObservedGeneration {
			return false
		}
	}
	return true
}

func (r *WhiskReconciler) event(w *whiskv1.Whisk, typ, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(w, nil, typ, reason, action, note, args...)
	}
}

// ensure creates or updates component c and reports whether it is ready.
func (r *WhiskReconciler) ensure(ctx context.Context, w *whiskv1.Whisk, c Component) (componentState, error) {
	wl := r.workloadOf(w, c)
	name := c.ObjectName(w)
	if c == Redis || c == CouchDB || (c == Controller && (w.Spec.Redis.Enabled || w.Spec.CouchDB.Enabled)) {
		if err := r.ensureStoreSecret(ctx, w); err != nil {
			return componentState{}, err
		}
	}
	switch c {
	case Controller, Static:
		if c == Controller {
			if err := r.ensureAuthSecret(ctx, w); err != nil {
				return componentState{}, err
			}
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace}}
		if err := r.apply(ctx, w, d, func() error { mutateDeployment(d, w, c, wl); return nil }); err != nil {
			return componentState{}, err
		}
		{ // the controller's API and the static files are reached through a Service
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace}}
			if err := r.apply(ctx, w, svc, func() error { mutateService(svc, w, c, wl, false); return nil }); err != nil {
				return componentState{}, err
			}
		}
		ok, why := deploymentReady(d)
		return componentState{ready: ok, message: why}, nil
	default:
		store := w.Spec.Redis
		if c == CouchDB {
			store = w.Spec.CouchDB
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace}}
		if err := r.apply(ctx, w, svc, func() error { mutateService(svc, w, c, wl, true); return nil }); err != nil {
			return componentState{}, err
		}
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace}}
		if err := r.apply(ctx, w, s, func() error { return mutateStatefulSet(s, w, c, wl, store) }); err != nil {
			return componentState{}, err
		}
		ok, why := statefulSetReady(s)
		if c != CouchDB {
			return componentState{ready: ok, message: why}, nil
		}
		st, err := r.ensureInitJob(ctx, w, wl)
		if err != nil {
			return st, err
		}
		st.ready = st.ready && ok
		st.message = why + "; " + st.message
		return st, nil
	}
}

// apply creates or updates obj through mutate, owned by w, and records what changed as an event.
func (r *WhiskReconciler) apply(ctx context.Context, w *whiskv1.Whisk, obj client.Object, mutate func() error) error {
	kind := fmt.Sprintf("%T", obj)
	kind = strings.ToLower(kind[strings.LastIndex(kind, ".")+1:])
	res, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
		if err := mutate(); err != nil {
			return err
		}
		return controllerutil.SetControllerReference(w, obj, r.Scheme)
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, obj.GetName(), err)
	}
	if res != controllerutil.OperationResultNone {
		r.event(w, corev1.EventTypeNormal, strings.Title(string(res)), "Apply", "%s %s %s", kind, obj.GetName(), res) //nolint:staticcheck // ASCII words
	}
	return nil
}

// ensureInitJob creates CouchDB's init Job, recreating it when its (immutable) template changed.
func (r *WhiskReconciler) ensureInitJob(ctx context.Context, w *whiskv1.Whisk, wl workload) (componentState, error) {
	want := initJob(w, wl)
	if err := controllerutil.SetControllerReference(w, want, r.Scheme); err != nil {
		return componentState{}, err
	}
	got := &batchv1.Job{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			return componentState{}, fmt.Errorf("job %s: %w", want.Name, err)
		}
		r.event(w, corev1.EventTypeNormal, "Created", "Apply", "job %s created", want.Name)
		return componentState{message: fmt.Sprintf("job %s: created", want.Name)}, nil
	case err != nil:
		return componentState{}, fmt.Errorf("job %s: %w", want.Name, err)
	}
	if got.Annotations[TemplateHashAnnotation] != want.Annotations[TemplateHashAnnotation] {
		if got.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, got, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return componentState{}, fmt.Errorf("job %s: replace: %w", got.Name, err)
			}
		}
		return componentState{message: fmt.Sprintf("job %s: replacing after a spec change", got.Name), requeue: true}, nil
	}
	done, failed, why := jobDone(got)
	if failed {
		return componentState{message: why}, nil
	}
	return componentState{ready: done, message: why}, nil
}

// remove deletes component c's objects; with claims it also deletes the component's PVCs.
func (r *WhiskReconciler) remove(ctx context.Context, w *whiskv1.Whisk, c Component, claims bool) error {
	name := c.ObjectName(w)
	var objs []client.Object
	switch c {
	case Controller:
		objs = []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.Secret{}}
	case Static:
		objs = []client.Object{&appsv1.Deployment{}, &corev1.Service{}}
	case Redis:
		objs = []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}}
	case CouchDB:
		objs = []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &batchv1.Job{}}
	}
	for _, o := range objs {
		n := name
		switch o.(type) {
		case *batchv1.Job:
			n = InitJobName(w)
		case *corev1.Secret:
			n = AuthSecretName(w) // deleted only when the operator made it (controlled by w)
		}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: n}, o)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !metav1.IsControlledBy(o, w) || !o.GetDeletionTimestamp().IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.event(w, corev1.EventTypeNormal, "Deleted", "Delete", "%s %s deleted (component %s off)", strings.ToLower(fmt.Sprintf("%T", o)[strings.LastIndex(fmt.Sprintf("%T", o), ".")+1:]), n, c)
		if _, ok := o.(*appsv1.StatefulSet); ok {
			claims = true
		}
	}
	if claims && (c == Redis || c == CouchDB) {
		err := r.Client.DeleteAllOf(ctx, &corev1.PersistentVolumeClaim{}, client.InNamespace(w.Namespace),
			client.MatchingLabels{LabelInstance: w.Name, LabelComponent: string(c), LabelManagedBy: ManagedByValue})
		if err != nil {
			return fmt.Errorf("persistentvolumeclaims: %w", err)
		}
	}
	return nil
}

// finalize deletes every component of a Whisk being deleted (PVCs included) and drops the finalizer.
func (r *WhiskReconciler) finalize(ctx context.Context, w *whiskv1.Whisk) error {
	if !controllerutil.ContainsFinalizer(w, whiskv1.Finalizer) {
		return nil
	}
	for _, c := range Components {
		if err := r.remove(ctx, w, c, true); err != nil {
			r.event(w, corev1.EventTypeWarning, ReasonReconcileError, "Finalize", "clean up %s: %v", c, err)
			return fmt.Errorf("clean up %s: %w", c, err)
		}
	}
	if err := r.removeStoreSecret(ctx, w); err != nil {
		r.event(w, corev1.EventTypeWarning, ReasonReconcileError, "Finalize", "clean up the stores' credentials: %v", err)
		return fmt.Errorf("clean up the stores' credentials: %w", err)
	}
	controllerutil.RemoveFinalizer(w, whiskv1.Finalizer)
	if err := r.Client.Update(ctx, w); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

// ensureAuthSecret makes sure the controller's API key exists: the Secret the spec names must be
// there with the key "auth"; without one the operator creates <name>-controller-auth with a random
// key once and never changes it (its data is never read into events, status or logs).
func (r *WhiskReconciler) ensureAuthSecret(ctx context.Context, w *whiskv1.Whisk) error {
	name := AuthSecretName(w)
	got := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: name}, got)
	switch {
	case err == nil:
		if len(got.Data[AuthSecretKey]) == 0 && got.StringData[AuthSecretKey] == "" {
			return fmt.Errorf("secret %s has no key %q (the API key \"<uuid>:<key>\")", name, AuthSecretKey)
		}
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("secret %s: %w", name, err)
	case w.Spec.Controller.AuthSecret != "":
		return fmt.Errorf("secret %s (spec.controller.authSecret) not found in namespace %s", name, w.Namespace)
	}
	key, err := newAPIKey()
	if err != nil {
		return err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace, Labels: labels(w, Controller)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{AuthSecretKey: []byte(key)},
	}
	if err := controllerutil.SetControllerReference(w, sec, r.Scheme); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	r.event(w, corev1.EventTypeNormal, "Created", "Apply", "secret %s created (the controller's API key)", name)
	return nil
}

// ensureStoreSecret makes sure the Secret with the credentials of the Whisk's Redis and CouchDB
// exists: created once with random passwords, owned by the Whisk, never changed (the stores keep
// their data, and CouchDB its admin, across restarts); one that lost a key is an error naming it.
func (r *WhiskReconciler) ensureStoreSecret(ctx context.Context, w *whiskv1.Whisk) error {
	name := StoreSecretName(w)
	got := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: name}, got)
	switch {
	case err == nil:
		for _, k := range []string{RedisPasswordKey, CouchDBUserKey, CouchDBPasswordKey} {
			if len(got.Data[k]) == 0 {
				return fmt.Errorf("secret %s has no key %q (delete the secret to have the operator make a new one; the stores' data then needs the new passwords)", name, k)
			}
		}
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("secret %s: %w", name, err)
	}
	redisPass, err := newPassword()
	if err != nil {
		return err
	}
	couchPass, err := newPassword()
	if err != nil {
		return err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace, Labels: labels(w, CouchDB)},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{RedisPasswordKey: []byte(redisPass), CouchDBUserKey: []byte(CouchDBAdmin),
			CouchDBPasswordKey: []byte(couchPass)},
	}
	if err := controllerutil.SetControllerReference(w, sec, r.Scheme); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	r.event(w, corev1.EventTypeNormal, "Created", "Apply", "secret %s created (the credentials of redis and couchdb)", name)
	return nil
}

// removeStoreSecret deletes the stores' credentials of a Whisk being deleted, when the operator
// made them (controlled by w): their stores and claims are gone with it.
func (r *WhiskReconciler) removeStoreSecret(ctx context.Context, w *whiskv1.Whisk) error {
	name := StoreSecretName(w)
	got := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: name}, got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	if !metav1.IsControlledBy(got, w) || !got.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := r.Client.Delete(ctx, got); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	r.event(w, corev1.EventTypeNormal, "Deleted", "Delete", "secret %s deleted (the credentials of redis and couchdb)", name)
	return nil
}

// newPassword is 32 random letters and digits.
func newPassword() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b[:]), nil
}

// newAPIKey is a random OpenWhisk-style key: a version-4 UUID, a colon, 64 letters and digits.
func newAPIKey() (string, error) {
	var b [16 + 64]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random API key: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	key := make([]byte, 64)
	for i := range key {
		key[i] = alnum[int(b[16+i])%len(alnum)]
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x:%s", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16], key), nil
}
