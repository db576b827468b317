// Package pricing estimates what the machines of a cluster plan cost by the hour, from the prices
// the clouds publish through their price APIs: AWS's Price List Query API (through the AWS SDK),
// Azure's Retail Prices API and Google's Cloud Billing Catalog API (through its Go client). nuv's
// emulators serve the same APIs with a small catalogue of their own, so a plan against them is
// priced the same way.
//
// What it gives is an estimate, labelled with its source (API, region, terms): on-demand prices of
// the instance types, no discounts, no disks, traffic or control-plane fees. Answers are cached
// under $NUV_HOME/cache/prices.json (0600, written atomically, each with the time the API gave
// it) for a day, so a plan stays fast; a lookup that fails or outlasts Book.Timeout is "no price"
// with the reason, never a failed plan.
package pricing

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Price is the hourly on-demand price of one machine of a type, and where it comes from.
type Price struct {
	// USDPerHour is the price of one machine for one hour, in US dollars.
	USDPerHour float64 `json:"usdPerHour"`
	// Source names the API and the terms ("AWS Price List API us-east-1 on-demand, Linux").
	Source string `json:"source"`
	// At is when the price API gave the price.
	At time.Time `json:"at"`
}

// Source looks prices up in one cloud's price API.
type Source interface {
	// Price returns the hourly price of one machine of m's type in m's region, or an error
	// saying why there is none (*NoPrice when the API answered without one).
	Price(ctx context.Context, m cluster.Machines) (Price, error)
	// Where names the API the source asks (its endpoint), to keep cached answers apart.
	Where(m cluster.Machines) string
}

// NoPrice is a price API's answer that it has no price for a machine type.
type NoPrice struct{ Msg string }

func (e *NoPrice) Error() string { return e.Msg }

// Book prices plans: a Source per cloud, a cache and a time limit.
type Book struct {
	// Sources by cloud ("aws", "azure", "gcp"); a cloud without one has no price.
	Sources map[string]Source
	// Cache keeps answers between plans; nil asks every time.
	Cache *Cache
	// Timeout bounds all the lookups of one estimate (default 2s).
	Timeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Line is the estimate of one change of a plan.
type Line struct {
	// Change is the change's action and key ("create node-group/workers").
	Change string `json:"change"`
	// Items are the machines the change's resource runs, each priced or not.
	Items []Item `json:"machines"`
}

// Item is machines of one type and their price.
type Item struct {
	Type   string `json:"type"`
	Count  int    `json:"count"`
	Region string `json:"region"`
	// Price is the price of one machine; nil when there is none (NoPrice says why).
	Price   *Price `json:"price,omitempty"`
	NoPrice string `json:"noPrice,omitempty"`
	// Cached is set when the price came from the cache.
	Cached bool `json:"cached,omitempty"`
}

// USDPerHour is the price of all the item's machines (0 without a price).
func (it Item) USDPerHour() float64 {
	if it.Price == nil {
		return 0
	}
	return it.Price.USDPerHour * float64(it.Count)
}

// Estimate is a plan's hourly cost estimate: a line per change whose resource runs machines.
type Estimate struct {
	Lines []Line `json:"lines"`
	// USDPerHour is the sum of the priced items; Unpriced counts the items without a price.
	USDPerHour float64 `json:"usdPerHour"`
	Unpriced   int     `json:"unpriced"`
}

// Empty reports whether no change of the plan runs machines.
func (e Estimate) Empty() bool { return len(e.Lines) == 0 }

// Estimate prices the changes of plan that create, update or replace a resource that runs
// machines (what the provider says through cluster.Priced): the hourly price of what they run once
// applied. It never fails: a price it cannot get is an item with NoPrice set.
func (b *Book) Estimate(ctx context.Context, pr cluster.Priced, c *spec.Cluster, plan *cluster.Plan) Estimate {
	if pr == nil || plan == nil {
		return Estimate{}
	}
	var est Estimate
	for _, ch := range plan.Changes {
		if ch.Desired == nil || ch.Action == cluster.Conflict {
			continue
		}
		ms := pr.Machines(c, *ch.Desired)
		if len(ms) == 0 {
			continue
		}
		l := Line{Change: string(ch.Action) + " " + ch.Key}
		for _, m := range ms {
			l.Items = append(l.Items, Item{Type: m.Type, Count: m.Count, Region: m.Region})
		}
		est.Lines = append(est.Lines, l)
	}
	if len(est.Lines) == 0 {
		return est
	}
	b.fill(ctx, pr, c, plan, &est)
	for _, l := range est.Lines {
		for _, it := range l.Items {
			if it.Price == nil {
				est.Unpriced++
			}
			est.USDPerHour += it.USDPerHour()
		}
	}
	return est
}

// fill looks up each distinct machine type once (in parallel, within the timeout) and puts the
// answers on the items.
func (b *Book) fill(ctx context.Context, pr cluster.Priced, c *spec.Cluster, plan *cluster.Plan, est *Estimate) {
	type answer struct {
		price  Price
		cached bool
		err    error
	}
	machines := map[string]cluster.Machines{}
	var order []string
	for _, ch := range plan.Changes {
		if ch.Desired == nil || ch.Action == cluster.Conflict {
			continue
		}
		for _, m := range pr.Machines(c, *ch.Desired) {
			k := b.key(m)
			if _, ok := machines[k]; !ok {
				machines[k] = m
				order = append(order, k)
			}
		}
	}
	timeout := b.Timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answers := make(map[string]answer, len(order))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var fresh []string
	for _, k := range order {
		m := machines[k]
		if pc, ok := b.Cache.get(k, b.now()); ok {
			answers[k] = answer{price: pc, cached: true}
			continue
		}
		fresh = append(fresh, k)
		wg.Add(1)
		go func() {
			defer wg.Done()
			pc, err := b.lookup(ctx, m)
			mu.Lock()
			answers[k] = answer{price: pc, err: err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	got := map[string]Price{}
	for _, k := range fresh {
		if a := answers[k]; a.err == nil {
			got[k] = a.price
		}
	}
	b.Cache.put(got)
	li := 0
	for _, ch := range plan.Changes {
		if ch.Desired == nil || ch.Action == cluster.Conflict {
			continue
		}
		ms := pr.Machines(c, *ch.Desired)
		if len(ms) == 0 {
			continue
		}
		for j, m := range ms {
			a := answers[b.key(m)]
			it := &est.Lines[li].Items[j]
			if a.err != nil {
				it.NoPrice = a.err.Error()
				continue
			}
			pc := a.price
			it.Price, it.Cached = &pc, a.cached
		}
		li++
	}
}

// lookup asks the cloud's source, turning a timeout into a reason a reader understands.
func (b *Book) lookup(ctx context.Context, m cluster.Machines) (Price, error) {
	src, ok := b.Sources[m.Cloud]
	if !ok {
		return Price{}, fmt.Errorf("nuv reads no price list of cloud %q", m.Cloud)
	}
	p, err := src.Price(ctx, m)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		timeout := b.Timeout
		if timeout == 0 {
			timeout = 2 * time.Second
		}
		return Price{}, fmt.Errorf("the price API did not answer within %s", timeout)
	}
	if err != nil {
		return Price{}, err
	}
	if p.At.IsZero() {
		p.At = b.now()
	}
	return p, nil
}

func (b *Book) key(m cluster.Machines) string {
	where := ""
	if src, ok := b.Sources[m.Cloud]; ok {
		where = src.Where(m)
	}
	return strings.Join([]string{m.Cloud, where, m.Region, m.Type}, "|")
}

func (b *Book) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Dollars formats an hourly price the way the plan prints it: up to four decimals, at least three
// ("$0.096/h", "$0.0416/h", "$1.250/h").
func Dollars(usd float64) string {
	v := fmt.Sprintf("%.4f", usd)
	if strings.HasSuffix(v, "0") {
		v = v[:len(v)-1]
	}
	return "$" + v + "/h"
}

// Describe is the text of an item: "$0.192/h (2 x m5.large at $0.096/h, SOURCE)" or
// "no price (REASON)". now gives a cached price's age.
func (it Item) Describe(now time.Time) string {
	if it.Price == nil {
		return fmt.Sprintf("no price for %d x %s (%s)", it.Count, it.Type, it.NoPrice)
	}
	src := it.Price.Source
	if it.Cached {
		src += ", cached " + age(now.Sub(it.Price.At)) + " ago"
	}
	return fmt.Sprintf("%s (%d x %s at %s, %s)", Dollars(it.USDPerHour()), it.Count, it.Type, Dollars(it.Price.USDPerHour), src)
}

// age is a duration as a person says it: "40s", "12m", "3h".
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

// Sources lists the distinct sources of the priced items, sorted, for the total's label.
func (e Estimate) Sources() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range e.Lines {
		for _, it := range l.Items {
			if it.Price != nil && !seen[it.Price.Source] {
				seen[it.Price.Source] = true
				out = append(out, it.Price.Source)
			}
		}
	}
	sort.Strings(out)
	return out
}
