package podnet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// Main runs nuv-podnet until SIGTERM: `nuv-podnet [--node NAME] [--cni-conf-dir DIR] [--kubeconfig F]`
// (the node name defaults to $NODE_NAME; the kubeconfig to the pod's service account).
func Main(args []string) int {
	fs := flag.NewFlagSet("nuv-podnet", flag.ContinueOnError)
	node := fs.String("node", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	confDir := fs.String("cni-conf-dir", "/etc/cni/net.d", "where the CNI configuration is written")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig (default: in-cluster service account)")
	podSubnet := fs.String("pod-subnet", os.Getenv("POD_SUBNET"), "the cluster's pod ranges (comma-separated): their traffic leaving them is masqueraded (default $POD_SUBNET; empty: none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *node == "" {
		fmt.Fprintln(os.Stderr, "nuv-podnet: --node or $NODE_NAME is required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	masq := ""
	if *podSubnet != "" {
		var err error
		if masq, err = MasqueradeRules(*podSubnet); err != nil {
			fmt.Fprintf(os.Stderr, "nuv-podnet: %v\n", err)
			return 2
		}
	}
	if err := run(ctx, *node, *confDir, *kubeconfig, masq); err != nil {
		fmt.Fprintf(os.Stderr, "nuv-podnet: %v\n", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, self, confDir, kubeconfig, masq string) error {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if ep := os.Getenv("CONTROL_PLANE_ENDPOINT"); ep != "" && kubeconfig == "" {
		// kind sets it (host:port) so that the pod network does not wait for kube-proxy's
		// Service routing, which itself waits for the nodes to be Ready
		cfg.Host = "https://" + ep
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 5*time.Minute)
	nodes := factory.Core().V1().Nodes()
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced) {
		return ctx.Err()
	}
	fmt.Fprintf(os.Stderr, "nuv-podnet: node %s, CNI configuration in %s\n", self, confDir)
	tick := time.NewTicker(time.Minute) // routes someone else removed come back
	defer tick.Stop()
	var last string
	for {
		list, err := nodes.Lister().List(labels.Everything())
		if err != nil {
			return err
		}
		state, err := reconcile(self, confDir, toNodes(list))
		if masq != "" {
			if merr := applyMasquerade(ctx, masq); merr != nil {
				err = errors.Join(err, merr)
			} else {
				state += "; masquerading traffic leaving the pod network"
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "nuv-podnet: %v\n", err)
		} else if state != last {
			fmt.Fprintf(os.Stderr, "nuv-podnet: %s\n", state)
			last = state
		}
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-tick.C:
		}
	}
}

func toNodes(list []*corev1.Node) []Node {
	out := make([]Node, 0, len(list))
	for _, n := range list {
		cidrs := n.Spec.PodCIDRs
		if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
			cidrs = []string{n.Spec.PodCIDR}
		}
		nd := Node{Name: n.Name, PodCIDRs: cidrs}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				nd.Addresses = append(nd.Addresses, a.Address)
			}
		}
		out = append(out, nd)
	}
	return out
}

// reconcile writes this node's CNI configuration and makes the kernel's routes of RouteProtocol
// exactly Routes(self, nodes). It returns a one-line summary of the state.
func reconcile(self, confDir string, nodes []Node) (string, error) {
	var errs []string
	conf := "no pod CIDR yet"
	for _, n := range nodes {
		if n.Name != self || len(n.PodCIDRs) == 0 {
			continue
		}
		b, err := Conflist(n.PodCIDRs)
		if err == nil {
			err = writeIfChanged(filepath.Join(confDir, ConfFile), b)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
		conf = "pods " + strings.Join(n.PodCIDRs, ",")
	}
	want, err := Routes(self, nodes)
	if err != nil {
		return "", err
	}
	have, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Protocol: RouteProtocol}, netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		return "", fmt.Errorf("list routes: %w", err)
	}
	wanted := map[string]bool{}
	var desc []string
	for _, r := range want {
		wanted[r.Dst.String()] = true
		desc = append(desc, r.String())
		if err := netlink.RouteReplace(&netlink.Route{Dst: r.Dst, Gw: r.Via, Protocol: RouteProtocol}); err != nil {
			errs = append(errs, fmt.Sprintf("route %s: %v", r, err))
		}
	}
	for _, r := range have {
		if r.Dst != nil && !wanted[r.Dst.String()] {
			if err := netlink.RouteDel(&r); err != nil {
				errs = append(errs, fmt.Sprintf("remove route %s: %v", r.Dst, err))
			}
		}
	}
	sort.Strings(desc)
	state := fmt.Sprintf("%s; routes: %s", conf, strings.Join(desc, ", "))
	if len(desc) == 0 {
		state = conf + "; no other node"
	}
	if len(errs) > 0 {
		return state, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return state, nil
}

// writeIfChanged replaces path atomically with b unless it already holds b.
func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
