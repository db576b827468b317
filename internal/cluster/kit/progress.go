package kit

import (
	"context"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// ProgressEvery is how often a wait repeats a status that has not changed: a status change is
// reported at once, a long unchanged one every 15 seconds, so a user sees the wait is alive.
const ProgressEvery = 15 * time.Second

// Progress is the reporting rule of one wait: Due says which statuses to report.
type Progress struct {
	start time.Time
	last  string
	at    time.Time
	now   func() time.Time
}

// NewProgress starts a wait's progress now.
func NewProgress() *Progress { return newProgress(time.Now) }

func newProgress(now func() time.Time) *Progress { return &Progress{start: now(), now: now} }

// Due records status s and says whether to report it: the first status, a changed one, or the
// same one ProgressEvery after it was last reported.
func (g *Progress) Due(s string) bool {
	now := g.now()
	if !g.at.IsZero() && s == g.last && now.Sub(g.at) < ProgressEvery {
		return false
	}
	g.last, g.at = s, now
	return true
}

// Started says whether a status was recorded already.
func (g *Progress) Started() bool { return !g.at.IsZero() }

// Last is the last status recorded.
func (g *Progress) Last() string { return g.last }

// Elapsed is the time since the wait began.
func (g *Progress) Elapsed() time.Duration { return g.now().Sub(g.start) }

// Poller follows a long operation to its end: it looks, reports the status by the progress rule,
// and looks again after Interval until the operation is done, the context ends or Bound passes
// (cluster.WaitTimeout: the user's bound on every wait).
type Poller struct {
	// What names the wait in the error of a wait that reached its bound.
	What string
	// Interval is the time between looks; Bound the longest wait (0: no bound).
	Interval, Bound time.Duration
	// Report tells the user a status with the time waited (nil: nothing is reported).
	Report func(status string, elapsed time.Duration)

	now func() time.Time
}

// Wait calls look until it says done or fails; a look that knows no status ("") reports nothing. A wait past Bound is a *cluster.WaitExpired naming
// the last status; a cancelled context returns ctx.Err() unwrapped, so a caller can say what goes
// on without it.
func (p Poller) Wait(ctx context.Context, look func(ctx context.Context) (status string, done bool, err error)) error {
	now := p.now
	if now == nil {
		now = time.Now
	}
	g := newProgress(now)
	for {
		status, done, err := look(ctx)
		if err != nil {
			return err
		}
		if status != "" && g.Due(status) && p.Report != nil {
			p.Report(status, g.Elapsed())
		}
		if done {
			return nil
		}
		if p.Bound > 0 && g.Elapsed() >= p.Bound {
			return &cluster.WaitExpired{What: p.What, Last: status, Waited: g.Elapsed()}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.Interval):
		}
	}
}
