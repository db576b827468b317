package kube

import "github.com/nuv-dev/nuv/internal/kube/kubesel"

// Cluster types nuv knows (package kubesel, which the task program reads the selection with). They
// are the values of KUBE in tasks and the directory names under tests/ for instance files.
const (
	TypeLocal   = kubesel.TypeLocal
	TypeKind    = kubesel.TypeKind
	TypeEKS     = kubesel.TypeEKS
	TypeAKS     = kubesel.TypeAKS
	TypeGKE     = kubesel.TypeGKE
	TypeK3s     = kubesel.TypeK3s
	TypeM8s     = kubesel.TypeM8s
	TypeOSH     = kubesel.TypeOSH
	TypeLKS     = kubesel.TypeLKS
	TypeKubeadm = kubesel.TypeKubeadm
	TypeGeneric = kubesel.TypeGeneric
)

// Types lists every valid type, in detection order of the distribution markers.
func Types() []string { return kubesel.Types() }

// ValidType tells whether t is one of Types.
func ValidType(t string) bool { return kubesel.ValidType(t) }

// OverridePath is the file that forces a cluster's type: clusters/<name>.type holding one type.
func OverridePath(project, name string) string { return kubesel.OverridePath(project, name) }

// Override returns the explicit type of a cluster, if any (kubesel.Override).
func Override(project, name string, getenv func(string) string) (string, error) {
	return kubesel.Override(project, name, getenv)
}

// forcedType reads detect.force from the environment or nuv's config file.
func forcedType(getenv func(string) string) (value, source string) { return kubesel.ForcedType(getenv) }

// Remember records a detected type for the cluster name whose kubeconfig is path (atomic write).
func Remember(project, name, path, kubeType string) error {
	return kubesel.Remember(project, name, path, kubeType)
}

// Remembered returns the type remembered for the kubeconfig at path, "" when none or stale.
func Remembered(project, name, path string) string { return kubesel.Remembered(project, name, path) }

// KnownType is the type of a cluster that needs no network call: the override, else the
// remembered detection, else "".
func KnownType(project, name string, getenv func(string) string) (string, error) {
	return kubesel.KnownType(project, name, getenv)
}
