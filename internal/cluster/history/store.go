package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Keeper is a state store that keeps an apply history of its own beside its records (the object
// stores: internal/cluster/state/objstore).
type Keeper interface {
	HistoryStore() Store
}

// ForState returns the history store that lives beside the records of s: Dir under a directory
// store, Kube in a Kubernetes store's namespace, the store's own for a Keeper; nil for a store of
// another kind (no history).
func ForState(s state.Store) (Store, error) {
	switch st := s.(type) {
	case Keeper:
		return st.HistoryStore(), nil
	case state.Dir:
		return Dir{Path: filepath.Join(st.Path, "history")}, nil
	case *state.Kube:
		return NewKube(st.Kubeconfig, st.Namespace)
	}
	return nil, nil
}

// file is the stored form of one provider's samples.
type file struct {
	Provider string   `json:"provider"`
	Samples  []Sample `json:"samples"`
}

func decode(where string, b []byte) ([]Sample, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("apply history %s is unreadable: %w", where, err)
	}
	return f.Samples, nil
}

// Decode reads the stored form of a provider's samples (where names it for messages); for
// stores outside this package.
func Decode(where string, b []byte) ([]Sample, error) { return decode(where, b) }

// Encode is the stored form of a provider's samples; for stores outside this package.
func Encode(provider string, s []Sample) ([]byte, error) { return encode(provider, s) }

// Merge appends add to have and keeps the newest Keep of each kind and action, oldest first (what
// Add stores); for stores outside this package.
func Merge(have []Sample, add ...Sample) []Sample { return merge(have, add...) }

func encode(provider string, s []Sample) ([]byte, error) {
	return json.MarshalIndent(file{Provider: provider, Samples: s}, "", "  ")
}

// Dir keeps each provider's samples in <Path>/<provider>.json (0600, written atomically under a
// lock, so two nuvs adding at once both land).
type Dir struct{ Path string }

var _ Store = Dir{}

func (d Dir) file(provider string) string { return filepath.Join(d.Path, provider+".json") }

// Load reads a provider's samples.
func (d Dir) Load(_ context.Context, provider string) ([]Sample, error) {
	b, err := os.ReadFile(d.file(provider))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("apply history: %w", err)
	}
	return decode(d.file(provider), b)
}

// Add records samples.
func (d Dir) Add(ctx context.Context, provider string, s ...Sample) error {
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return fmt.Errorf("apply history: %w", err)
	}
	unlock, err := fsutil.Lock(ctx, d.file(provider)+".lock", nil)
	if err != nil {
		return fmt.Errorf("apply history: %w", err)
	}
	defer unlock()
	have, err := d.Load(ctx, provider)
	if err != nil {
		have = nil // an unreadable history is replaced, not a reason to fail an apply
	}
	b, err := encode(provider, merge(have, s...))
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(d.file(provider), append(b, '\n'), 0o600)
}

// Kube keeps each provider's samples in the ConfigMap nuv-history-<provider> (key history.json)
// of Namespace in the cluster Kubeconfig points at; writes use the ConfigMap's resourceVersion and
// retry on a conflict, so two machines adding at once both land.
type Kube struct {
	Namespace string
	cs        kubernetes.Interface
}

var _ Store = (*Kube)(nil)

// NewKube connects to the cluster kubeconfig names (its current context).
func NewKube(kubeconfig, namespace string) (*Kube, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("apply history in %s: %w", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("apply history in %s: %w", kubeconfig, err)
	}
	return &Kube{Namespace: namespace, cs: cs}, nil
}

const dataKey = "history.json"

func configMapName(provider string) string { return "nuv-history-" + provider }

// Load reads a provider's samples.
func (k *Kube) Load(ctx context.Context, provider string) ([]Sample, error) {
	cm, err := k.cs.CoreV1().ConfigMaps(k.Namespace).Get(ctx, configMapName(provider), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("apply history: %w", err)
	}
	return decode(k.Namespace+"/"+cm.Name, []byte(cm.Data[dataKey]))
}

// Add records samples.
func (k *Kube) Add(ctx context.Context, provider string, s ...Sample) error {
	api := k.cs.CoreV1().ConfigMaps(k.Namespace)
	for attempt := 0; ; attempt++ {
		cm, err := api.Get(ctx, configMapName(provider), metav1.GetOptions{})
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return fmt.Errorf("apply history: %w", err)
		}
		var have []Sample
		if !create {
			have, _ = decode(k.Namespace+"/"+cm.Name, []byte(cm.Data[dataKey]))
		} else {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName(provider), Namespace: k.Namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "nuv"}}}
		}
		b, err := encode(provider, merge(have, s...))
		if err != nil {
			return err
		}
		cm.Data = map[string]string{dataKey: string(b)}
		if create {
			_, err = api.Create(ctx, cm, metav1.CreateOptions{})
		} else {
			_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 10 {
			continue
		}
		if err != nil {
			return fmt.Errorf("apply history: %w", err)
		}
		return nil
	}
}
