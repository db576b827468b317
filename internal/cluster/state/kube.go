package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Kube is the Kubernetes backend: in Namespace of the cluster Kubeconfig points at, each record is
// the Secret nuv-state-<name> (type nuv.dev/cluster-state, key record.json) and each lock the Lease
// nuv-lock-<name> whose holderIdentity is the holder as JSON. Writes use the Secret's
// resourceVersion, so two machines never overwrite each other's record unseen.
type Kube struct {
	Namespace  string
	Kubeconfig string
	server     string // the API server's address (Owner)
	cs         kubernetes.Interface
	mu         sync.Mutex
	versions   map[string]string // record name -> resourceVersion last read or written
	gens       map[string]int64  // record name -> generation at that resourceVersion
}

func (k *Kube) generation(name string) int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gens[name]
}

func (k *Kube) setGeneration(name string, g int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gens[name] = g
}

func (k *Kube) version(name string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.versions[name]
	return v, ok
}

func (k *Kube) setVersion(name, v string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v == "" {
		delete(k.versions, name)
		return
	}
	k.versions[name] = v
}

// Secret type and labels of state records.
const (
	SecretType  corev1.SecretType = "nuv.dev/cluster-state"
	recordKey                     = "record.json"
	labelRecord                   = "nuv.dev/state-of"
)

// NewKube connects to the cluster a kubeconfig names (its current context).
func NewKube(kubeconfig, namespace string) (*Kube, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("state store kube:%s@%s: %w", namespace, kubeconfig, err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("state store kube:%s@%s: %w", namespace, kubeconfig, err)
	}
	return &Kube{Namespace: namespace, Kubeconfig: kubeconfig, server: cfg.Host, cs: cs, versions: map[string]string{}, gens: map[string]int64{}}, nil
}

var _ Store = (*Kube)(nil)

// Where names the namespace and kubeconfig.
func (k *Kube) Where() string { return "kube:" + k.Namespace + "@" + k.Kubeconfig }

func secretName(name string) string { return "nuv-state-" + name }
func leaseName(name string) string  { return "nuv-lock-" + name }

// Check makes sure the namespace exists (creating it) and records can be listed.
func (k *Kube) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := k.cs.CoreV1().Namespaces().Get(ctx, k.Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = k.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.Namespace}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err == nil {
		_, err = k.cs.CoreV1().Secrets(k.Namespace).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: labelRecord})
	}
	if err != nil {
		return fmt.Errorf("state store %s cannot be reached: %w", k.Where(), err)
	}
	return nil
}

// Load reads a record's Secret.
func (k *Kube) Load(ctx context.Context, name string) (*Record, error) {
	s, err := k.cs.CoreV1().Secrets(k.Namespace).Get(ctx, secretName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cluster %s: %w", name, ErrNoRecord)
	}
	if err != nil {
		return nil, fmt.Errorf("state of cluster %s in %s: %w", name, k.Where(), err)
	}
	return k.fromSecret(name, s)
}

func (k *Kube) fromSecret(name string, s *corev1.Secret) (*Record, error) {
	where := fmt.Sprintf("Secret %s/%s (%s)", k.Namespace, s.Name, k.Kubeconfig)
	b, ok := s.Data[recordKey]
	if !ok {
		return nil, fmt.Errorf("%s: %w: no %s key (it is left as it is; `nuv cluster state rm %s` removes it)", where, ErrCorrupt, recordKey, name)
	}
	r, err := decodeRecord(where, name, b)
	if err != nil {
		return nil, err
	}
	k.setVersion(name, s.ResourceVersion)
	k.setGeneration(name, r.Generation)
	return r, nil
}

// Save creates or updates the record's Secret, refusing to overwrite a newer one.
func (k *Kube) Save(ctx context.Context, r *Record) error {
	next, b, err := nextVersion(r)
	if err != nil {
		return err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(r.Name), Namespace: k.Namespace,
			Labels: map[string]string{labelRecord: r.Name, "app.kubernetes.io/managed-by": "nuv"}},
		Type: SecretType,
		Data: map[string][]byte{recordKey: b},
	}
	secrets := k.cs.CoreV1().Secrets(k.Namespace)
	rv, known := k.version(r.Name)
	var out *corev1.Secret
	if r.Generation == 0 {
		out, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster %s: %w (a record was created meanwhile)", r.Name, ErrConflict)
		}
	} else {
		if !known {
			cur, gerr := secrets.Get(ctx, sec.Name, metav1.GetOptions{})
			if gerr != nil {
				return fmt.Errorf("save state of cluster %s: %w", r.Name, gerr)
			}
			if prev, err := k.fromSecret(r.Name, cur); err != nil || prev.Generation != r.Generation {
				return fmt.Errorf("cluster %s: %w", r.Name, ErrConflict)
			}
			rv = cur.ResourceVersion
		}
		if known && k.generation(r.Name) != r.Generation {
			return fmt.Errorf("cluster %s: %w (stored generation %d, ours %d)", r.Name, ErrConflict, k.generation(r.Name), r.Generation)
		}
		sec.ResourceVersion = rv
		out, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster %s: %w", r.Name, ErrConflict)
		}
	}
	if err != nil {
		return fmt.Errorf("save state of cluster %s in %s: %w", r.Name, k.Where(), err)
	}
	k.setVersion(r.Name, out.ResourceVersion)
	k.setGeneration(r.Name, next.Generation)
	*r = next
	return nil
}

// Remove deletes the record's Secret.
func (k *Kube) Remove(ctx context.Context, name string) error {
	err := k.cs.CoreV1().Secrets(k.Namespace).Delete(ctx, secretName(name), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove state of cluster %s from %s: %w", name, k.Where(), err)
	}
	k.setVersion(name, "")
	return nil
}

// List reads every record Secret.
func (k *Kube) List(ctx context.Context) ([]*Record, []error) {
	l, err := k.cs.CoreV1().Secrets(k.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labelRecord})
	if err != nil {
		return nil, []error{fmt.Errorf("list state in %s: %w", k.Where(), err)}
	}
	var out []*Record
	var errs []error
	for i := range l.Items {
		s := &l.Items[i]
		r, err := k.fromSecret(s.Labels[labelRecord], s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, errs
}

// A lock is the Lease nuv-lock-<name>, created atomically by the API server. It is taken over by
// an Update whose resourceVersion is the one the dead holder was read at (so of several contenders
// one wins and the others get a Conflict), and released by a Delete with the resourceVersion of
// one's own taking as precondition (so a lock taken over by someone else is never deleted).

func (k *Kube) lease(name string, h Holder) *coordinationv1.Lease {
	h.ID = newID()
	b, _ := json.Marshal(h)
	id := string(b)
	now := metav1.NewMicroTime(time.Now())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName(name), Namespace: k.Namespace,
			Labels: map[string]string{labelRecord: name, "app.kubernetes.io/managed-by": "nuv"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, AcquireTime: &now},
	}
}

// TryLock creates the Lease.
func (k *Kube) TryLock(ctx context.Context, name string, h Holder) (func() error, *Holder, error) {
	leases := k.cs.CoordinationV1().Leases(k.Namespace)
	for {
		created, err := leases.Create(ctx, k.lease(name, h), metav1.CreateOptions{})
		if err == nil {
			return k.unlocker(ctx, name, created.ResourceVersion), nil, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("lock cluster %s in %s: %w", name, k.Where(), err)
		}
		cur, herr := k.Holder(ctx, name)
		if herr != nil {
			return nil, nil, herr
		}
		if cur != nil {
			return nil, cur, ErrLocked
		}
		// released meanwhile: try again
	}
}

// TakeOver updates the Lease at the resourceVersion was was read at.
func (k *Kube) TakeOver(ctx context.Context, name string, was *Holder, h Holder) (func() error, *Holder, error) {
	if was == nil || was.Version == "" {
		cur, err := k.Holder(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		return nil, cur, ErrLocked
	}
	l := k.lease(name, h)
	l.ResourceVersion = was.Version
	updated, err := k.cs.CoordinationV1().Leases(k.Namespace).Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		cur, herr := k.Holder(ctx, name)
		if herr != nil {
			return nil, nil, herr
		}
		return nil, cur, ErrLocked
	}
	if err != nil {
		return nil, nil, fmt.Errorf("take over lock of cluster %s in %s: %w", name, k.Where(), err)
	}
	return k.unlocker(ctx, name, updated.ResourceVersion), nil, nil
}

// unlocker deletes the Lease only while it is still at rv, our own taking.
func (k *Kube) unlocker(ctx context.Context, name, rv string) func() error {
	return func() error {
		err := k.cs.CoordinationV1().Leases(k.Namespace).Delete(context.WithoutCancel(ctx), leaseName(name),
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("unlock cluster %s in %s: %w", name, k.Where(), err)
		}
		return nil
	}
}

// Holder reads the Lease.
func (k *Kube) Holder(ctx context.Context, name string) (*Holder, error) {
	l, err := k.cs.CoordinationV1().Leases(k.Namespace).Get(ctx, leaseName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock of cluster %s in %s: %w", name, k.Where(), err)
	}
	var h Holder
	if l.Spec.HolderIdentity == nil || json.Unmarshal([]byte(*l.Spec.HolderIdentity), &h) != nil {
		h = Holder{Command: "unknown (Lease " + l.Name + " has no nuv holder)"}
	}
	h.Version = l.ResourceVersion
	return &h, nil
}

// Break deletes the Lease whatever its holder.
func (k *Kube) Break(ctx context.Context, name string) error {
	err := k.cs.CoordinationV1().Leases(k.Namespace).Delete(ctx, leaseName(name), metav1.DeleteOptions{})
	if err != nil && !errors.Is(err, context.Canceled) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release lock of cluster %s in %s: %w", name, k.Where(), err)
	}
	return nil
}
