// Package history keeps how long each step of `nuv cluster apply` took, per provider, resource
// kind and action, so that `nuv cluster plan` can say how long an apply will take: the median and
// the 90th percentile of the recorded steps of that kind, with the number of samples, or "no
// history" where there is none. No peer says this: terraform and kOps print what will change, never
// for how long.
//
// The history lives beside the cluster records, in the same state store, so a team that shares a
// store shares its history: under <state dir>/history/<provider>.json for the directory backend,
// in the ConfigMap nuv-history-<provider> of the store's namespace for the Kubernetes backend. Each
// (provider, kind, action) keeps its newest samples only (Keep). Steps are timed on the machine
// that ran them; a history recorded on a fast laptop says so only through its figures.
package history

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Keep is how many of the newest samples each (provider, kind, action) keeps.
const Keep = 50

// Sample is one carried-out plan step.
type Sample struct {
	Kind    string    `json:"kind"`
	Action  string    `json:"action"`
	Seconds float64   `json:"seconds"`
	At      time.Time `json:"at"`
	// Cluster names the cluster the step was for (for people reading the file).
	Cluster string `json:"cluster,omitempty"`
}

// Store keeps the samples of each provider. Implementations: Dir, Kube.
type Store interface {
	// Load returns a provider's samples (none when nothing was recorded).
	Load(ctx context.Context, provider string) ([]Sample, error)
	// Add records samples of a provider, keeping the newest Keep of each kind and action; two
	// nuvs adding at once both land.
	Add(ctx context.Context, provider string, s ...Sample) error
}

// merge appends add to have and keeps the newest Keep of each (kind, action), oldest first.
func merge(have []Sample, add ...Sample) []Sample {
	all := append(append([]Sample(nil), have...), add...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	count := map[string]int{}
	keep := make([]bool, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		k := all[i].Kind + "\x00" + all[i].Action
		if count[k] < Keep {
			count[k]++
			keep[i] = true
		}
	}
	out := all[:0:0]
	for i, s := range all {
		if keep[i] {
			out = append(out, s)
		}
	}
	return out
}

// Estimate is what the history says of one kind of step.
type Estimate struct {
	// Samples is how many steps it rests on (0: no history).
	Samples int
	// Median and P90 are the median and the 90th percentile (nearest rank) of their durations.
	Median, P90 time.Duration
}

// Known reports whether the estimate rests on any sample.
func (e Estimate) Known() bool { return e.Samples > 0 }

// String is "~2m10s (p90 3m0s, 12 samples)" or "no history".
func (e Estimate) String() string {
	if !e.Known() {
		return "no history"
	}
	unit := "samples"
	if e.Samples == 1 {
		unit = "sample"
	}
	return fmt.Sprintf("~%s (p90 %s, %d %s)", round(e.Median), round(e.P90), e.Samples, unit)
}

// For estimates the steps of kind and action from samples.
func For(samples []Sample, kind, action string) Estimate {
	var d []float64
	for _, s := range samples {
		if s.Kind == kind && s.Action == action {
			d = append(d, s.Seconds)
		}
	}
	if len(d) == 0 {
		return Estimate{}
	}
	sort.Float64s(d)
	median := d[len(d)/2]
	if len(d)%2 == 0 {
		median = (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	p90 := d[int(math.Ceil(0.9*float64(len(d))))-1]
	return Estimate{Samples: len(d), Median: seconds(median), P90: seconds(p90)}
}

// Total is an apply's expected duration: steps run one after another, so the medians add up (and
// the 90th percentiles give a pessimistic bound). Unknown counts the steps without history.
type Total struct {
	Median, P90 time.Duration
	Known       int
	Unknown     int
}

// Add counts one step's estimate.
func (t *Total) Add(e Estimate) {
	if !e.Known() {
		t.Unknown++
		return
	}
	t.Known++
	t.Median += e.Median
	t.P90 += e.P90
}

// String is "~5m (p90 7m)", with the steps it cannot count named; "no history" when none is known.
func (t Total) String() string {
	if t.Known == 0 {
		return "no history"
	}
	s := fmt.Sprintf("~%s (p90 %s)", round(t.Median), round(t.P90))
	if t.Unknown > 0 {
		s += fmt.Sprintf(", plus %d step(s) with no history", t.Unknown)
	}
	return s
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// round shows a duration the way a person estimates: milliseconds under a second, tenths under a minute, seconds under an
// hour, minutes beyond.
func round(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}
