package localkube

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	kwokv1 "sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/yaml"
)

// decodeStages splits kwok's configuration file into its Stage documents, strictly.
func decodeStages(t *testing.T, data []byte) map[string]kwokv1.Stage {
	t.Helper()
	stages := map[string]kwokv1.Stage{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var st kwokv1.Stage
		if err := yaml.UnmarshalStrict(doc, &st); err != nil {
			t.Fatalf("a document of kwok.yaml is not a Stage: %v\n%s", err, doc)
		}
		if st.APIVersion != kwokv1.GroupVersion.String() || st.Kind != kwokv1.StageKind || st.Name == "" {
			t.Fatalf("document %s/%s %q is not a named Stage", st.APIVersion, st.Kind, st.Name)
		}
		if _, dup := stages[st.Name]; dup {
			t.Fatalf("stage %s twice", st.Name)
		}
		stages[st.Name] = st
	}
	return stages
}

// TestKwokStagesAreKwoksOwnPlusNuvVolumes: the node and pod stages are exactly what the kwok
// module publishes (nothing copied into nuv, nothing edited), and nuv adds its volume stages.
func TestKwokStagesAreKwoksOwnPlusNuvVolumes(t *testing.T) {
	data, err := kwokStages()
	if err != nil {
		t.Fatal(err)
	}
	got := decodeStages(t, data)
	for _, doc := range []string{nodefast.DefaultNodeInit, nodelease.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady, podfast.DefaultPodComplete, podfast.DefaultPodDelete} {
		var want kwokv1.Stage
		if err := yaml.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[want.Name], want) {
			t.Errorf("stage %s differs from kwok's:\n got %+v\nwant %+v", want.Name, got[want.Name].Spec, want.Spec)
		}
		delete(got, want.Name)
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	if len(got) != 2 || got["nuv-volume-provision"].Spec.ResourceRef.Kind != "PersistentVolumeClaim" ||
		got["nuv-volume-reclaim"].Spec.ResourceRef.Kind != "PersistentVolume" {
		t.Fatalf("nuv's own stages: %v", names)
	}
	for _, st := range got {
		if st.Spec.Delay != nil {
			t.Errorf("stage %s has a delay", st.Name)
		}
		if !strings.Contains(st.Spec.Selector.MatchExpressions[0].CEL.Expression, "'"+storageClass+"'") {
			t.Errorf("stage %s does not select StorageClass %s: %+v", st.Name, storageClass, st.Spec.Selector)
		}
	}
	if !got["nuv-volume-reclaim"].Spec.Steps[0].Delete {
		t.Error("nuv-volume-reclaim does not delete the volume")
	}
}

// TestVolumeProvisionTemplate renders nuv's provision stage with kwok's own template renderer for
// a claim, as kwok does, and checks the volume it would make: bound to that claim (by uid), of its
// size, modes and class, reclaimed on release.
func TestVolumeProvisionTemplate(t *testing.T) {
	var tmpl string
	for _, st := range volumeStages() {
		if st.Name == "nuv-volume-provision" {
			tmpl = st.Spec.Steps[0].Apply.Template
		}
	}
	block := corev1.PersistentVolumeBlock
	class := storageClass
	for _, tc := range []struct {
		name  string
		modes []corev1.PersistentVolumeAccessMode
		mode  *corev1.PersistentVolumeMode
		want  corev1.PersistentVolumeMode
	}{
		{"filesystem", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, nil, corev1.PersistentVolumeFilesystem},
		{"block, two modes", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany}, &block, corev1.PersistentVolumeBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pvc := &corev1.PersistentVolumeClaim{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "default", UID: types.UID("6b1f0c2e-1")},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: tc.modes, VolumeMode: tc.mode, StorageClassName: &class,
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			}
			out, err := gotpl.NewRenderer(nil).ToJSON(tmpl, pvc)
			if err != nil {
				t.Fatal(err)
			}
			var pv corev1.PersistentVolume
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&pv); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			ref := pv.Spec.ClaimRef
			size := pv.Spec.Capacity[corev1.ResourceStorage]
			if pv.Kind != "PersistentVolume" || pv.Name != "nuv-6b1f0c2e-1" || pv.Annotations["pv.kubernetes.io/provisioned-by"] != provisioner ||
				ref == nil || ref.Name != "data-db-0" || ref.Namespace != "default" || ref.UID != pvc.UID ||
				size.String() != "1Gi" || !reflect.DeepEqual(pv.Spec.AccessModes, tc.modes) || pv.Spec.StorageClassName != storageClass ||
				pv.Spec.VolumeMode == nil || *pv.Spec.VolumeMode != tc.want ||
				pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Spec.HostPath == nil {
				t.Errorf("volume for the claim:\n%s", out)
			}
		})
	}
}
