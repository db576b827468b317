package localkube

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	kwokconfig "sigs.k8s.io/kwok/pkg/apis/config/v1alpha1"
	kwokv1 "sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

// The stages nuv's local clusters give kwok (its --config file) are of two origins:
//
//   - kwok's own, read from the kwok module go.mod requires, where kwok publishes them as Go
//     strings: its "fast" node and pod stages (nodes become Ready, pods Running and Ready, Job
//     pods Succeeded and deleted pods gone as soon as the controllers ask, with no delay) and its
//     node heartbeat that renews node leases. nuv does not change them; what nuv wants different
//     it says in the objects it creates (a node's capacity and versions, see nodeSpec), which the
//     stages keep.
//   - nuv's own volume provisioner for the default StorageClass (see volumeStages), written here
//     against kwok's Stage API.

// storageClass is the default StorageClass of a local cluster and provisioner the name its
// PersistentVolumes are provisioned by.
const (
	storageClass = "standard"
	provisioner  = "nuv.dev/local-path"
)

// kwokStages returns kwok's configuration file for a local cluster: every stage as one YAML
// document.
func kwokStages() ([]byte, error) {
	var stages []kwokv1.Stage
	for _, s := range []struct{ name, doc string }{
		{"node/fast node-initialize", nodefast.DefaultNodeInit},
		{"node/heartbeat-with-lease", nodelease.DefaultNodeHeartbeatWithLease},
		{"pod/fast pod-ready", podfast.DefaultPodReady},
		{"pod/fast pod-complete", podfast.DefaultPodComplete},
		{"pod/fast pod-delete", podfast.DefaultPodDelete},
	} {
		var st kwokv1.Stage
		if err := yaml.UnmarshalStrict([]byte(s.doc), &st); err != nil {
			return nil, fmt.Errorf("kwok's %s stage does not decode as a Stage: %w", s.name, err)
		}
		if st.Kind != kwokv1.StageKind || st.Spec.ResourceRef.Kind == "" {
			return nil, fmt.Errorf("kwok's %s stage is a %q of %q, not a Stage", s.name, st.Kind, st.Spec.ResourceRef.Kind)
		}
		stages = append(stages, st)
	}
	stages = append(stages, volumeStages()...)
	var out bytes.Buffer
	out.WriteString("# kwok stages of a nuv local cluster, written by nuv: kwok v0.8.0's fast node and pod stages and\n" +
		"# its node lease heartbeat, and nuv's own volume provisioner for StorageClass \"" + storageClass + "\".\n")
	for i, st := range stages {
		b, err := yaml.Marshal(st)
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", st.Name, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

// kwokParallelism is how many nodes kwok plays a stage for, and renews the lease of, at once (its
// own default is 4 of each). kwok's client has no rate limit; its work per node is a template and
// one request, so with 4 workers a 1,000-node create waits on request latency, not on CPU.
const kwokParallelism = 16

// kwokOptions returns kwok's second configuration file: a KwokConfiguration with nuv's parallelism.
func kwokOptions() ([]byte, error) {
	c := kwokconfig.KwokConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kwokconfig.GroupVersion.String(), Kind: kwokconfig.KwokConfigurationKind},
		Options: kwokconfig.KwokConfigurationOptions{
			NodePlayStageParallelism: kwokParallelism,
			PodPlayStageParallelism:  kwokParallelism,
			NodeLeaseParallelism:     kwokParallelism,
		},
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("kwok options: %w", err)
	}
	return append([]byte("# kwok options of a nuv local cluster, written by nuv (the flags nuv passes win over these).\n"), b...), nil
}

func cel(expr string) kwokv1.MatchExpression {
	return kwokv1.MatchExpression{CEL: &kwokv1.ExpressionCEL{Expression: expr}}
}

// volumeStages provision PersistentVolumes for claims of StorageClass "standard" the way an
// external provisioner does, and leave the rest to the cluster's own PersistentVolume controller:
//
//   - nuv-volume-provision: a claim of the class without a volume gets a volume made for it,
//     already bound to it (claimRef with the claim's uid), of the size and access modes it asks
//     for; kube-controller-manager then binds the claim to it, exactly as it does for a CSI
//     provisioner's volume.
//   - nuv-volume-reclaim: a volume of the class whose claim is gone (Released) and whose reclaim
//     policy is Delete is deleted, which the controller leaves to the provisioner.
//
// No kubelet mounts the volumes; their hostPath only names them.
func volumeStages() []kwokv1.Stage {
	apply := kwokv1.StagePatchTypeApply
	meta := func(name string) (metav1.TypeMeta, metav1.ObjectMeta) {
		return metav1.TypeMeta{APIVersion: kwokv1.GroupVersion.String(), Kind: kwokv1.StageKind}, metav1.ObjectMeta{Name: name}
	}
	ofClass := "self.spec.storageClassName == '" + storageClass + "'"
	provisionT, provisionM := meta("nuv-volume-provision")
	reclaimT, reclaimM := meta("nuv-volume-reclaim")
	return []kwokv1.Stage{
		{TypeMeta: provisionT, ObjectMeta: provisionM, Spec: kwokv1.StageSpec{
			ResourceRef: kwokv1.StageResourceRef{APIGroup: "v1", Kind: "PersistentVolumeClaim"},
			Selector: &kwokv1.StageSelector{MatchExpressions: []kwokv1.MatchExpression{
				cel(ofClass),
				cel("!has(self.metadata.deletionTimestamp)"),
				cel("!has(self.spec.volumeName) || self.spec.volumeName == ''"),
			}},
			Steps: []kwokv1.StageStep{{Apply: &kwokv1.StageApply{Type: &apply, Template: `apiVersion: v1
kind: PersistentVolume
metadata:
  name: nuv-{{ .metadata.uid }}
  annotations:
    pv.kubernetes.io/provisioned-by: ` + provisioner + `
spec:
  storageClassName: ` + storageClass + `
  capacity:
    storage: {{ .spec.resources.requests.storage | Quote }}
  accessModes:
{{- range .spec.accessModes }}
  - {{ . | Quote }}
{{- end }}
  volumeMode: {{ or .spec.volumeMode "Filesystem" | Quote }}
  persistentVolumeReclaimPolicy: Delete
  claimRef:
    apiVersion: v1
    kind: PersistentVolumeClaim
    namespace: {{ .metadata.namespace | Quote }}
    name: {{ .metadata.name | Quote }}
    uid: {{ .metadata.uid | Quote }}
  hostPath:
    path: /var/lib/nuv-local-path/{{ .metadata.namespace }}/{{ .metadata.name }}-{{ .metadata.uid }}
    type: DirectoryOrCreate
`}}},
		}},
		{TypeMeta: reclaimT, ObjectMeta: reclaimM, Spec: kwokv1.StageSpec{
			ResourceRef: kwokv1.StageResourceRef{APIGroup: "v1", Kind: "PersistentVolume"},
			Selector: &kwokv1.StageSelector{MatchExpressions: []kwokv1.MatchExpression{
				cel(ofClass),
				cel("!has(self.metadata.deletionTimestamp)"),
				cel("self.spec.persistentVolumeReclaimPolicy == 'Delete'"),
				cel("has(self.status.phase) && self.status.phase == 'Released'"),
			}},
			Steps: []kwokv1.StageStep{{Delete: true}},
		}},
	}
}
