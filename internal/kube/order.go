package kube

import "github.com/nuv-dev/nuv/internal/kube/kubesel"

// OrderPath is the file recording the order in which the project's clusters appeared in clusters/
// (one name a line, first seen first): the numbering of `nuv kube list` and `task N`
// (kubesel.Ordered).
func OrderPath(project string) string { return kubesel.OrderPath(project) }
