package deploy

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kindOrder is the order objects are applied in (and deleted in reverse): what others depend on
// first. Kinds not listed go after these, in their given order.
var kindOrder = []string{
	"Namespace", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
	"CustomResourceDefinition", "ServiceAccount", "Secret", "ConfigMap", "StorageClass",
	"PersistentVolume", "PersistentVolumeClaim", "ClusterRole", "ClusterRoleBinding", "Role",
	"RoleBinding", "Service", "DaemonSet", "Pod", "ReplicaSet", "Deployment", "StatefulSet",
	"Job", "CronJob", "Ingress", "APIService",
	"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
}

// sortForApply orders objs by kindOrder, keeping the given order within a kind.
func sortForApply(objs []*unstructured.Unstructured) {
	rank := map[string]int{}
	for i, k := range kindOrder {
		rank[k] = i
	}
	r := func(o *unstructured.Unstructured) int {
		if i, ok := rank[o.GetKind()]; ok {
			return i
		}
		return len(kindOrder)
	}
	sort.SliceStable(objs, func(i, j int) bool { return r(objs[i]) < r(objs[j]) })
}
