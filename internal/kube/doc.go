// Package kube is nuv's inventory of the project's clusters: every clusters/*.kubeconfig, numbered
// from 1 in the order they were added (.nuv/order, see List), the selected one, its detected type,
// and how tasks and kubectl see it.
//
// Selection. `nuv kube use N` records the project's selection in <project>/.nuv/current (an atomic
// rename: readers see the old or the new selection, never a mix, and of two concurrent `use` the last
// rename wins). A per-shell selection is the exported variable NUV_CLUSTER (a cluster name of the
// project, or a kubeconfig path); `eval "$(nuv kube use N --shell)"` sets it. NUV_CLUSTER, when set,
// wins over the project selection, for that shell only. The project's selection is also the link
// .nuv/kubeconfig (ProjectKubeconfig): a shell exporting KUBECONFIG=<it> (`eval "$(nuv kube env)"`)
// gets kubectl following `task N`. ~/.kube/config is never touched except by
// MergeGlobal (`nuv kube use --global`), which merges one context atomically and keeps a backup.
//
// Which cluster. Resolve (resolve.go) is the one function every command acting on a single cluster
// uses: --kubeconfig, then NUV_CLUSTER, then an explicit KUBECONFIG (as for kubectl), then
// .nuv/current; the type from KUBE, the override, the remembered detection, else detected. Its
// documentation is the reference.
//
// Types. A cluster's type (local, kind, eks, aks, gke, k3s, m8s, osh, lks, kubeadm, generic) comes from an
// explicit override first (clusters/<name>.type, then the detect.force setting), else from what its
// nodes carry (labels and spec.providerID, see DetectNodes). Detected types are remembered under
// <project>/.nuv/types/ so tasks get KUBE without a network call.
//
// Every network call goes through RESTConfig, whose dial and request timeouts are bounded, so an
// unreachable cluster costs seconds, not minutes; List never touches the network (Probe does).
package kube
