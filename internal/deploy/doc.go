// Package deploy implements nuv's operator verbs: operator, instance, destroy, clean, defin, run,
// status and up. It builds the operator's kustomization with krusty (image override from
// MY_OPERATOR_IMAGE and TAG), applies it server side with the field manager "nuv", and waits on
// watches with a timeout that report what is not ready yet and why.
//
// On a local cluster (kube type "local", or nodes labelled nuv.dev/provider=local) pods run no
// containers, so Operator also runs the operator binary on the host as a detached process that
// authenticates with the operator ServiceAccount's token: its RBAC is exactly the in-cluster pod's.
// The in-cluster Deployment stays as applied (kwok simulates its pod), so a second Operator changes
// nothing.
//
// Each render of the operator is recorded (package rendercache: the Deployments, keyed by the
// content of operator/config and the image choice), and status builds and prints its report
// through package statusview: with both, the slim front answers `nuv status` itself, with the same
// bytes, without kustomize or a clientset.
//
// The exported functions are the Go API other verbs (dtest, all-kubes) call directly.
package deploy
