package watch

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Render formats nodes, pods and services as three tables (the live view's body).
func Render(nodes []*corev1.Node, pods []*corev1.Pod, svcs []*corev1.Service, now time.Time) string {
	var b strings.Builder
	// Sort copies: the slices may be the caller's (or a lister's).
	nodes = append([]*corev1.Node(nil), nodes...)
	pods = append([]*corev1.Pod(nil), pods...)
	svcs = append([]*corev1.Service(nil), svcs...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	sort.Slice(pods, func(i, j int) bool {
		return key(pods[i].Namespace, pods[i].Name) < key(pods[j].Namespace, pods[j].Name)
	})
	sort.Slice(svcs, func(i, j int) bool {
		return key(svcs[i].Namespace, svcs[i].Name) < key(svcs[j].Namespace, svcs[j].Name)
	})

	fmt.Fprintf(&b, "\nNODES (%d)\n", len(nodes))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tVERSION\tAGE")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, nodeStatus(n), dashed(n.Status.NodeInfo.KubeletVersion), age(n.CreationTimestamp.Time, now))
	}
	tw.Flush()

	fmt.Fprintf(&b, "\nPODS (%d)\n", len(pods))
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tREADY\tSTATUS\tRESTARTS\tNODE\tAGE")
	for _, p := range pods {
		ready, total, restarts := podCounts(p)
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%d\t%s\t%s\n", p.Namespace, p.Name, ready, total, podStatus(p), restarts, dashed(p.Spec.NodeName), age(p.CreationTimestamp.Time, now))
	}
	tw.Flush()

	fmt.Fprintf(&b, "\nSERVICES (%d)\n", len(svcs))
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tTYPE\tCLUSTER-IP\tPORTS\tAGE")
	for _, s := range svcs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Namespace, s.Name, s.Spec.Type, dashed(s.Spec.ClusterIP), ports(s), age(s.CreationTimestamp.Time, now))
	}
	tw.Flush()
	return b.String()
}

func key(ns, name string) string { return ns + "/" + name }

func nodeStatus(n *corev1.Node) string {
	s := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				s = "Ready"
			} else {
				s = "NotReady"
			}
		}
	}
	if n.Spec.Unschedulable {
		s += ",SchedulingDisabled"
	}
	return s
}

// podStatus is what `kubectl get pods` shows in STATUS, in short: a waiting or terminated
// container's reason when there is one, Terminating while deleted, else the phase.
func podStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" {
			return "Init:" + w.Reason
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
		if t := cs.State.Terminated; t != nil && t.Reason != "" {
			return t.Reason
		}
	}
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}

func podCounts(p *corev1.Pod) (ready, total int, restarts int32) {
	total = len(p.Spec.Containers)
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
		restarts += cs.RestartCount
	}
	return
}

func ports(s *corev1.Service) string {
	var ps []string
	for _, p := range s.Spec.Ports {
		v := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort != 0 {
			v = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
		ps = append(ps, v)
	}
	if len(ps) == 0 {
		return "-"
	}
	return strings.Join(ps, ",")
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age is kubectl's short age: 5s, 3m, 2h, 4d.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
