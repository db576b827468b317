package localkube

import (
	"context"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Progress of long node waits: the first line after progressAfter, then one every progressEvery
// while the count moves (and at least every progressIdle when it does not).
const (
	progressAfter = 2 * time.Second
	progressEvery = 2 * time.Second
	progressIdle  = 10 * time.Second
)

// readyTimeout is how long nuv waits for n nodes to become Ready: a minute, and 60 ms more per
// node (kwok marks ~100 nodes Ready a second on two loaded cores; this leaves it a factor of six).
func readyTimeout(n int) time.Duration {
	return time.Minute + time.Duration(n)*60*time.Millisecond
}

// applyAndWait runs apply (which creates, patches or deletes nodes) while it watches the nodes,
// and returns when apply is done and s.Nodes nodes are Ready. Watching from the start lets the
// progress lines count the nodes as they are made.
func applyAndWait(ctx context.Context, dir string, s *state, log cli.Logger, apply func(context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return apply(gctx) })
	g.Go(func() error { return waitNodesReady(gctx, dir, s, log) })
	return g.Wait()
}

// waitNodesReady waits until s.Nodes nodes are Ready. It lists the nodes once and then follows a
// watch (listing a 1,000-node cluster is several megabytes: polling it would cost the API server
// more than the nodes do), listing again only when the watch ends.
func waitNodesReady(ctx context.Context, dir string, s *state, log cli.Logger) error {
	if log == nil {
		log = cli.Quiet()
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout(s.Nodes))
	defer cancel()
	cs, err := clientFor(dir)
	if err != nil {
		return err
	}
	c := readyCounter{want: s.Nodes, log: log, start: time.Now()}
	for {
		err := c.follow(ctx, cs)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d Ready node(s) (have %d of %d nodes; last error: %v): %w", s.Nodes, c.readyCount(), len(c.ready), err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readyCounter counts the Ready nodes of a cluster from a list and the watch that follows it.
type readyCounter struct {
	want  int
	log   cli.Logger
	ready map[string]bool // by node name: whether it is Ready
	// progress reporting
	start        time.Time
	lastReport   time.Time
	reportedWith int
}

func (c *readyCounter) readyCount() int {
	n := 0
	for _, r := range c.ready {
		if r {
			n++
		}
	}
	return n
}

// follow lists the nodes and follows a watch until want nodes are Ready (nil), the watch ends or
// fails (an error: the caller lists again), or ctx ends.
func (c *readyCounter) follow(ctx context.Context, cs kubernetes.Interface) error {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	c.ready = make(map[string]bool, len(list.Items))
	for i := range list.Items {
		c.ready[list.Items[i].Name] = kube.NodeReady(&list.Items[i])
	}
	if c.done() {
		return nil
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			c.report()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("node watch ended")
			}
			n, isNode := ev.Object.(*corev1.Node)
			switch {
			case ev.Type == watch.Error:
				return fmt.Errorf("node watch: %v", ev.Object)
			case !isNode:
			case ev.Type == watch.Deleted:
				delete(c.ready, n.Name)
			case ev.Type == watch.Added || ev.Type == watch.Modified:
				c.ready[n.Name] = kube.NodeReady(n)
			}
			if c.done() {
				return nil
			}
		}
	}
}

func (c *readyCounter) done() bool {
	if c.readyCount() < c.want {
		return false
	}
	if c.reportedWith > 0 { // a wait long enough to report progress also reports its end
		c.log.Infof("  nodes Ready %d/%d after %.1fs", c.readyCount(), c.want, time.Since(c.start).Seconds())
	}
	return true
}

// report prints "nodes Ready K/N (M made)" once the wait is long enough to deserve it.
func (c *readyCounter) report() {
	now := time.Now()
	if now.Sub(c.start) < progressAfter {
		return
	}
	ready := c.readyCount()
	since := now.Sub(c.lastReport)
	if since < progressEvery || (ready == c.reportedWith-1 && since < progressIdle) {
		return
	}
	c.log.Infof("  nodes Ready %d/%d (%d made)", ready, c.want, len(c.ready))
	c.lastReport, c.reportedWith = now, ready+1
}
