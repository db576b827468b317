// Package watch is `nuv kube watch`: a live view of one cluster's nodes, pods and services fed by
// client-go informers (one list, then watches; no polling). On a terminal it redraws a table after
// changes; elsewhere it prints one line per change. It ends cleanly when its context is cancelled.
package watch

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Options configure a watch.
type Options struct {
	Namespace string        // "" = all namespaces
	Out       io.Writer     // where the view or the change lines go
	Live      bool          // redraw a table (terminal) instead of printing change lines
	Title     string        // shown in the live view's header
	Refresh   time.Duration // minimum time between redraws (default 200ms)
	// StartTimeout bounds the first contact with the API server (default 5s).
	StartTimeout time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Run watches until ctx is cancelled (nil then) or the API server cannot be reached at start.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	if o.Refresh <= 0 {
		o.Refresh = 200 * time.Millisecond
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 0 // watches are long-lived; ctx ends them
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watch: client: %w", err)
	}
	if err := reachable(ctx, cs, o.StartTimeout); err != nil {
		return err
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(o.Namespace))
	v := &view{o: o, events: make(chan string, 1024), errs: map[string]string{}}
	nodes := f.Core().V1().Nodes()
	pods := f.Core().V1().Pods()
	svcs := f.Core().V1().Services()
	for kind, inf := range map[string]cache.SharedIndexInformer{"node": nodes.Informer(), "pod": pods.Informer(), "service": svcs.Informer()} {
		kind := kind
		if _, err := inf.AddEventHandler(v.handler(kind)); err != nil {
			return fmt.Errorf("watch %ss: %w", kind, err)
		}
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			v.setErr(kind, err)
		})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.Start(ctx.Done())
	defer f.Shutdown()
	v.nodes, v.pods, v.svcs = nodes.Lister(), pods.Lister(), svcs.Lister()
	if !o.Live {
		for {
			select {
			case <-ctx.Done():
				return nil
			case line := <-v.events:
				fmt.Fprintln(o.Out, o.Now().Format("15:04:05")+" "+line)
			}
		}
	}
	f.WaitForCacheSync(ctx.Done())
	v.draw()
	tick := time.NewTicker(o.Refresh)
	defer tick.Stop()
	dirty := false
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(o.Out)
			return nil
		case <-v.events:
			dirty = true
		case <-tick.C:
			if dirty {
				dirty = false
				v.draw()
			}
		}
	}
}

func reachable(ctx context.Context, cs kubernetes.Interface, d time.Duration) error {
	done := make(chan error, 1)
	go func() {
		_, err := cs.Discovery().ServerVersion()
		done <- err
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("watch: API server not reachable: %w", err)
		}
		return nil
	case <-t.C:
		return fmt.Errorf("watch: API server did not answer within %s", d)
	case <-ctx.Done():
		return nil
	}
}

type view struct {
	o      Options
	events chan string
	nodes  corelisters.NodeLister
	pods   corelisters.PodLister
	svcs   corelisters.ServiceLister
	mu     sync.Mutex
	errs   map[string]string
}

func (v *view) setErr(kind string, err error) {
	v.mu.Lock()
	v.errs[kind] = err.Error()
	v.mu.Unlock()
	v.send(fmt.Sprintf("ERROR %s watch: %v (retrying)", kind, err))
}

func (v *view) send(line string) {
	select {
	case v.events <- line:
	default: // a redraw is pending anyway; change lines are dropped only under a flood
	}
}

func (v *view) handler(kind string) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { v.send("ADDED    " + kind + " " + summary(obj)) },
		UpdateFunc: func(oldObj, newObj any) {
			if s := summary(newObj); s != summary(oldObj) {
				v.send("MODIFIED " + kind + " " + s)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			v.send("DELETED  " + kind + " " + summary(obj))
		},
	}
}

// summary is the one-line description of an object used by change lines (and to drop updates
// that change nothing visible, like node heartbeats).
func summary(obj any) string {
	switch o := obj.(type) {
	case *corev1.Node:
		return fmt.Sprintf("%s %s %s", o.Name, nodeStatus(o), o.Status.NodeInfo.KubeletVersion)
	case *corev1.Pod:
		ready, total, restarts := podCounts(o)
		return fmt.Sprintf("%s/%s %s %d/%d restarts=%d node=%s", o.Namespace, o.Name, podStatus(o), ready, total, restarts, dashed(o.Spec.NodeName))
	case *corev1.Service:
		return fmt.Sprintf("%s/%s %s %s %s", o.Namespace, o.Name, o.Spec.Type, dashed(o.Spec.ClusterIP), ports(o))
	}
	return fmt.Sprintf("%T", obj)
}

func (v *view) draw() {
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	now := v.o.Now()
	fmt.Fprintf(&b, "nuv kube watch %s — %s — Ctrl-C to quit\n", v.o.Title, now.Format("15:04:05"))
	v.mu.Lock()
	for _, k := range sortedKeys(v.errs) {
		fmt.Fprintf(&b, "! %s watch: %s\n", k, v.errs[k])
	}
	v.mu.Unlock()
	nodes, _ := v.nodes.List(labels.Everything())
	pods, _ := v.pods.List(labels.Everything())
	svcs, _ := v.svcs.List(labels.Everything())
	b.WriteString(Render(nodes, pods, svcs, now))
	fmt.Fprint(v.o.Out, b.String())
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
