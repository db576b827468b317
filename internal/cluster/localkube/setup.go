package localkube

import (
	"context"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// setupCluster creates what a fresh cluster needs besides its control plane: the nodes kwok manages
// (labelled per flavor) and the default StorageClass, then waits until the nodes are Ready and the
// default ServiceAccount exists (so the first workload does not race the controllers).
func setupCluster(ctx context.Context, dir string, s *state, log cli.Logger) error {
	cs, err := clientFor(dir)
	if err != nil {
		return err
	}
	flavor, err := cluster.LookupFlavor(s.Flavor)
	if err != nil {
		return err
	}
	err = applyAndWait(ctx, dir, s, log, func(ctx context.Context) error {
		if err := applyGroups(ctx, cs, flavor, s.Name, s.Version, s.groups(), nil); err != nil {
			return err
		}
		return createStorageClass(ctx, cs)
	})
	if err != nil {
		return err
	}
	return waitDefaultServiceAccount(ctx, cs)
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

func createStorageClass(ctx context.Context, cs kubernetes.Interface) error {
	mode := storagev1.VolumeBindingImmediate
	policy := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: storageClass, Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       provisioner,
		ReclaimPolicy:     &policy,
		VolumeBindingMode: &mode,
	}
	_, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create default StorageClass: %w", err)
	}
	return nil
}

func waitDefaultServiceAccount(ctx context.Context, cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the default ServiceAccount: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
