package localtest_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

func TestUniqueName(t *testing.T) {
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, tc := range []struct{ prefix, want string }{
		{"t", "t-uniquename-"},
		{"Web_App", "web-app-uniquename-"},
		{strings.Repeat("x", 80), strings.Repeat("x", 56) + "-"},
	} {
		got := localtest.UniqueName(t, tc.prefix)
		if !strings.HasPrefix(got, tc.want) || len(got) > 63 || !label.MatchString(got) {
			t.Errorf("UniqueName(%q) = %q, want a DNS label starting %q", tc.prefix, got, tc.want)
		}
		if again := localtest.UniqueName(t, tc.prefix); again == got {
			t.Errorf("UniqueName(%q) twice = %q", tc.prefix, got)
		}
	}
}

// TestIntegrationShared: two tests asking for one shape get one cluster; each one's kubeconfig copy
// is in its project; a test's namespace and the cluster-scoped objects it registers are gone after it.
func TestIntegrationShared(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a local cluster (real control plane); skipped under -short")
	}
	var names, namespaces, configMaps []string
	var cs *kubernetes.Clientset
	for _, sub := range []string{"first", "second"} {
		t.Run(sub, func(t *testing.T) {
			project := t.TempDir()
			c := localtest.Shared(t, localtest.Options{Project: project})
			names = append(names, c.Name)
			if want := filepath.Join(project, "clusters", c.Name+".kubeconfig"); c.Kubeconfig != want {
				t.Errorf("kubeconfig %s, want the copy %s", c.Kubeconfig, want)
			}
			if _, err := os.Stat(c.Kubeconfig); err != nil {
				t.Error(err)
			}
			cs = kubernetes.NewForConfigOrDie(c.Config)
			ns := c.Namespace(t)
			namespaces = append(namespaces, ns)
			ctx := context.Background()
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pc := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: localtest.UniqueName(t, "extra")}}
			if _, err := cs.CoreV1().Namespaces().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			c.DeleteAtEnd(t, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", pc.Name)
			namespaces = append(namespaces, pc.Name)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: localtest.UniqueName(t, "cm")}}
			if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			c.DeleteAtEnd(t, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", cm.Name)
			configMaps = append(configMaps, cm.Name)
		})
	}
	if len(names) != 2 || names[0] != names[1] {
		t.Fatalf("clusters %v, want one shared", names)
	}
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s after its test: %v, want not found", ns, err)
		}
	}
	for _, cm := range configMaps {
		if _, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), cm, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("configmap default/%s after its test: %v, want not found", cm, err)
		}
	}
}
