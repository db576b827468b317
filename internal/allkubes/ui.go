package allkubes

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/report"
)

// ui serialises everything all-kubes prints: children's lines with a per-cluster prefix (or held
// back and printed as one block per cluster with group), and on a terminal a live progress line
// (done / running / failed) redrawn below the output.
type ui struct {
	mu       sync.Mutex
	w        io.Writer
	group    bool
	progress bool
	width    int
	total    int
	state    map[string]report.Status
	held     map[string][]string
	start    time.Time
	drawn    bool
	stopped  bool
	tick     *time.Ticker
	quit     chan struct{}
}

func newUI(w io.Writer, group, progress bool, clusters []string) *ui {
	u := &ui{w: w, group: group, progress: progress, total: len(clusters),
		state: map[string]report.Status{}, held: map[string][]string{}, start: time.Now(), quit: make(chan struct{})}
	for _, c := range clusters {
		if len(c) > u.width {
			u.width = len(c)
		}
	}
	if progress {
		u.tick = time.NewTicker(500 * time.Millisecond)
		go func() {
			for {
				select {
				case <-u.tick.C:
					u.mu.Lock()
					u.redraw()
					u.mu.Unlock()
				case <-u.quit:
					return
				}
			}
		}()
	}
	return u
}

func (u *ui) clear() {
	if u.drawn {
		fmt.Fprint(u.w, "\r\x1b[K")
		u.drawn = false
	}
}

func (u *ui) redraw() {
	if !u.progress || u.stopped {
		return
	}
	u.clear()
	done, running, failed := 0, 0, 0
	for _, s := range u.state {
		switch {
		case s == report.Running:
			running++
		case s.OK():
			done++
		default:
			done++
			failed++
		}
	}
	fmt.Fprintf(u.w, "all-kubes: %d/%d done, %d running, %d failed, %ds", done, u.total, running, failed,
		int(time.Since(u.start).Seconds()))
	u.drawn = true
}

// line prints one output line of a cluster (or holds it back in group mode).
func (u *ui) line(cluster, text string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		return
	}
	if u.group {
		u.held[cluster] = append(u.held[cluster], text)
		return
	}
	u.clear()
	fmt.Fprintf(u.w, "%-*s | %s\n", u.width, cluster, text)
	u.redraw()
}

func (u *ui) running(cluster string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state[cluster] = report.Running
	u.redraw()
}

// done records a cluster's final status; in group mode its block is printed now.
func (u *ui) done(cluster string, s report.Status) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state[cluster] = s
	if u.stopped {
		return
	}
	u.clear()
	if u.group {
		fmt.Fprintf(u.w, "=== %s: %s\n", cluster, s)
		for _, l := range u.held[cluster] {
			fmt.Fprintf(u.w, "    %s\n", l)
		}
		delete(u.held, cluster)
	} else {
		fmt.Fprintf(u.w, "%-*s | === %s\n", u.width, cluster, strings.ToUpper(string(s)))
	}
	u.redraw()
}

// stop erases the progress line and ends the ticker; later calls do nothing.
func (u *ui) stop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		return
	}
	u.clear()
	u.stopped = true
	if u.tick != nil {
		u.tick.Stop()
		close(u.quit)
	}
}
