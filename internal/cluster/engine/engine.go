// Package engine is nuv's cluster lifecycle engine. From a spec it asks the spec's provider for the
// resources wanted (Desired) and those that exist (Observe), computes the plan with cluster.Diff and,
// on apply, carries it out change by change through the provider (Execute), recording every
// resource in the state store as soon as it exists and the cluster's lifecycle phase at every step.
// A plan and an apply therefore always agree: apply executes exactly the plan it prints.
//
// An interrupted apply (Ctrl-C, a crash, kill -9) is resumed by the next one: Observe finds what was
// made, so nothing is made twice. An interrupted delete is finished by the next delete. One lock per
// cluster keeps two nuvs from working on it at once.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// Engine plans and applies cluster specs.
type Engine struct {
	// Providers by name.
	Providers map[string]cluster.Provider
	// Store keeps records and locks.
	Store state.Store
	// Out receives what apply and delete do, change by change; nil discards it.
	Out io.Writer
	// Log receives notes (lock waits, takeovers); nil is quiet.
	Log cli.Logger
	// LockWait bounds the wait for a cluster locked by another nuv (default 2 minutes).
	LockWait time.Duration
	// Command describes this nuv in lock records ("nuv cluster apply -f dev.yaml").
	Command string
	// Addons handles a spec's add-ons (spec.addons), a step after everything the provider makes
	// (addons.ClusterStep; steps.go); a spec without add-ons never reaches it, one with add-ons
	// cannot be planned without it.
	Addons cluster.Step
	// History, if set, records how long each carried-out step took (per provider, resource kind
	// and action) and gives plans their expected durations (Estimates).
	History history.Store
	// Prices, if set, gives plans an hourly cost estimate of the machines they run (Costs).
	Prices *pricing.Book
	// AfterStep, if set, is called after each change is carried out and recorded (step counts from
	// 1). Tests use it as a failpoint: a process killed there shows that the next apply resumes.
	AfterStep func(step int, ch cluster.Change)
	// BeforeRecord, if set, is called after a provider call made or changed something and before
	// the record says so: after each Execute of step that returned, and before each resource a
	// provider records along the way (key names it). Tests use it as the failpoint of the window
	// that matters: a process killed there made something the record does not know; the next apply
	// must find it (by tag, name or id) and make nothing twice.
	BeforeRecord func(step int, key string)
	// WaitTimeout bounds the wait for an applied cluster to be ready (cluster.Readier);
	// 0: cluster.DefaultWaitTimeout.
	WaitTimeout time.Duration
	// ReadyInterval is the time between two looks at an applied cluster's readiness (0: 2s).
	ReadyInterval time.Duration
}

// Provider returns the provider called name, or an error listing the known ones.
func (e *Engine) Provider(name string) (cluster.Provider, error) {
	if p, ok := e.Providers[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown provider %q (valid: %s)", name, strings.Join(e.ProviderNames(), ", "))
}

// ProviderNames lists the providers, sorted.
func (e *Engine) ProviderNames() []string {
	var n []string
	for k := range e.Providers {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func (e *Engine) out() io.Writer {
	if e.Out == nil {
		return io.Discard
	}
	return e.Out
}

func (e *Engine) log() cli.Logger {
	if e.Log == nil {
		return cli.Quiet()
	}
	return e.Log
}

// Validate checks a decoded spec against its provider's rules; errors carry file, line and path.
func (e *Engine) Validate(c *spec.Cluster) (cluster.Provider, error) {
	p, err := e.Provider(c.Spec.Provider)
	if err != nil {
		return nil, c.Positioned(sourceFile(c), []spec.FieldError{{Path: "spec.provider", Msg: err.Error()}})
	}
	// A spec holds only its provider's section: one generic check, whatever the provider checks.
	errs := c.CheckSections()
	for _, fe := range p.Validate(c) {
		if !slices.Contains(errs, fe) {
			errs = append(errs, fe)
		}
	}
	if len(errs) > 0 {
		return nil, c.Positioned(sourceFile(c), errs)
	}
	return p, nil
}

func sourceFile(c *spec.Cluster) string {
	if i := strings.LastIndex(c.Source, ":"); i > 0 {
		return c.Source[:i]
	}
	if c.Source == "" {
		return "spec"
	}
	return c.Source
}

// Plan computes what an apply of c would do. It reads only: nothing is written to the cluster,
// the cloud or the state store.
func (e *Engine) Plan(ctx context.Context, c *spec.Cluster) (*cluster.Plan, error) {
	p, err := e.Validate(c)
	if err != nil {
		return nil, err
	}
	rec, err := e.load(ctx, c.Metadata.Name)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Provider != p.Name() {
		return nil, fmt.Errorf("cluster %s exists with provider %s, the spec says %s (delete it first)", c.Metadata.Name, rec.Provider, p.Name())
	}
	return e.plan(ctx, p, c, rec)
}

func (e *Engine) load(ctx context.Context, name string) (*state.Record, error) {
	rec, err := e.Store.Load(ctx, name)
	if errors.Is(err, state.ErrNoRecord) {
		return nil, nil
	}
	return rec, err
}

func (e *Engine) plan(ctx context.Context, p cluster.Provider, c *spec.Cluster, rec *state.Record) (*cluster.Plan, error) {
	desired, err := p.Desired(c)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Metadata.Name, err)
	}
	var recorded []cluster.Resource
	if rec != nil {
		recorded = rec.Resources
	}
	actual, err := p.Observe(ctx, c, recorded)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: observe what exists: %w", c.Metadata.Name, err)
	}
	plan, err := cluster.Diff(c.Metadata.Name, p.Name(), desired, actual)
	if err != nil {
		return nil, err
	}
	if err := e.planSteps(ctx, p, c, plan); err != nil {
		return nil, err
	}
	if pf, ok := p.(cluster.Preflighter); ok && !plan.Empty() {
		if err := pf.Preflight(ctx, c, plan); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Metadata.Name, err)
		}
	}
	return plan, nil
}

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// CreateOnly refuses to work on a cluster that already exists (cluster.ErrExists): `create`.
	CreateOnly bool
	// Check, if set, sees the plan (and the record it was made against) under the cluster's lock,
	// before anything is written; an error stops the apply with nothing changed. The CLI asks for
	// consent to deletes and replaces here, and verifies saved plans (savedplan.go).
	Check func(ctx context.Context, rec *state.Record, plan *cluster.Plan) error
}

// catchUp brings the record of a cluster that needs no change up to date when it is missing,
// behind or failed: a former apply that made everything but did not see the cluster ready looks
// again, the resources are observed and the record saved as running (and the expiry marked on
// the cluster where it changed). A record that is up to date is left alone: nothing is written.
func (e *Engine) catchUp(ctx context.Context, p cluster.Provider, c *spec.Cluster, rec *state.Record) error {
	if rec != nil && rec.Phase == state.Running && sameSpec(rec.Spec, c) {
		return nil
	}
	lost := rec == nil
	rec = e.newRecord(rec, p, c)
	before := rec.ExpiresAt
	setExpiry(rec, c, time.Now())
	if !lost && rec.Generation > 0 {
		// A former apply made everything but did not see the cluster ready: look again.
		if err := e.waitReady(ctx, p, c, rec); err != nil {
			return err
		}
	}
	rec.Phase, rec.Error, rec.Spec = state.Running, "", c
	actual, err := p.Observe(ctx, c, rec.Resources)
	if err != nil {
		return err
	}
	rec.Resources = mine(actual)
	if err := e.Store.Save(ctx, rec); err != nil {
		return err
	}
	if lost || !sameTime(before, rec.ExpiresAt) {
		return e.remark(ctx, p, c, rec)
	}
	return nil
}

// Apply converges the cluster to c and returns the plan it carried out (empty when nothing had to
// change; then nothing was written anywhere).
func (e *Engine) Apply(ctx context.Context, c *spec.Cluster, o ApplyOptions) (*cluster.Plan, error) {
	p, err := e.Validate(c)
	if err != nil {
		return nil, err
	}
	name := c.Metadata.Name
	unlock, err := e.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := e.load(ctx, name)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Provider != p.Name() {
		return nil, fmt.Errorf("cluster %s exists with provider %s, the spec says %s (delete it first)", name, rec.Provider, p.Name())
	}
	if rec != nil && (rec.Phase == state.Deleting || rec.Phase == state.DeletionFailed) {
		return nil, fmt.Errorf("cluster %s is being deleted (phase %s): finish with `nuv cluster delete %s` first", name, rec.Phase, name)
	}
	plan, err := e.plan(ctx, p, c, rec)
	if err != nil {
		return nil, err
	}
	if o.Check != nil {
		if err := o.Check(ctx, rec, plan); err != nil {
			return nil, err
		}
	}
	if o.CreateOnly {
		if err := refuseExisting(name, rec, plan); err != nil {
			return nil, err
		}
	}
	if n := plan.Count(cluster.Conflict); n > 0 {
		var keys []string
		for _, ch := range plan.Changes {
			if ch.Action == cluster.Conflict {
				keys = append(keys, ch.Key)
			}
		}
		return plan, fmt.Errorf("cluster %s: %s exist(s) but nuv did not make them; nuv leaves them alone and cannot apply (rename the cluster or remove them)", name, strings.Join(keys, ", "))
	}
	if plan.Empty() {
		return plan, e.catchUp(ctx, p, c, rec)
	}
	existed := plan.Unchanged > 0 || slices.ContainsFunc(plan.Changes, func(ch cluster.Change) bool { return ch.Actual != nil && !ch.Actual.Foreign })
	rec = e.newRecord(rec, p, c)
	phase := state.Updating
	if rec.Generation == 0 || rec.Phase == state.Creating || rec.Phase == state.CreationFailed {
		phase = state.Creating
	}
	before := rec.ExpiresAt
	setExpiry(rec, c, time.Now())
	c.Marks = e.marks(rec)
	rec.Phase, rec.Spec = phase, c
	if err := e.Store.Save(ctx, rec); err != nil {
		return nil, err
	}
	if err := e.execute(ctx, p, c, rec, plan); err != nil {
		return plan, err
	}
	if err := e.waitReady(ctx, p, c, rec); err != nil {
		return plan, err
	}
	rec.Phase, rec.Error = state.Running, ""
	if err := e.save(ctx, rec); err != nil {
		return plan, err
	}
	if existed && !sameTime(before, rec.ExpiresAt) {
		// What existed before this apply still carries the old expiry.
		return plan, e.remark(ctx, p, c, rec)
	}
	return plan, nil
}

func (e *Engine) newRecord(rec *state.Record, p cluster.Provider, c *spec.Cluster) *state.Record {
	if rec != nil {
		return rec
	}
	return &state.Record{Name: c.Metadata.Name, Provider: p.Name(), Spec: c}
}

// setExpiry gives rec the expiry c's ttl asks for, counted from now, when the cluster is new or
// its ttl changed (rec.Spec is still the spec applied before); a spec without ttl clears it. An
// expiry that `nuv cluster extend` moved stays while the ttl is unchanged.
func setExpiry(rec *state.Record, c *spec.Cluster, now time.Time) {
	if c.Spec.TTL == "" {
		rec.ExpiresAt = nil
		return
	}
	if rec.ExpiresAt != nil && rec.Spec != nil && rec.Spec.Spec.TTL == c.Spec.TTL {
		return
	}
	d, err := spec.ParseTTL(c.Spec.TTL) // validated with the spec
	if err != nil {
		return
	}
	t := now.Add(d).UTC().Truncate(time.Second)
	rec.ExpiresAt = &t
}

func sameSpec(a, b *spec.Cluster) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(a.Metadata, b.Metadata) && reflect.DeepEqual(a.Spec, b.Spec)
}

func mine(rs []cluster.Resource) []cluster.Resource {
	var out []cluster.Resource
	for _, r := range rs {
		if !r.Foreign {
			out = append(out, r)
		}
	}
	return out
}

// save writes the record even when ctx was cancelled (recording how far an interrupted apply got).
func (e *Engine) save(ctx context.Context, rec *state.Record) error {
	return e.Store.Save(context.WithoutCancel(ctx), rec)
}

// execute carries out plan change by change, recording each; on failure the record says where it
// stopped (phase *_failed and the error).
func (e *Engine) execute(ctx context.Context, p cluster.Provider, c *spec.Cluster, rec *state.Record, plan *cluster.Plan) error {
	w := e.out()
	for i, ch := range plan.Changes {
		t0 := time.Now()
		fmt.Fprintf(w, "[%d/%d] %s %s ...\n", i+1, len(plan.Changes), verbing(ch.Action), ch.Key)
		save := func(r cluster.Resource) error {
			if e.BeforeRecord != nil {
				e.BeforeRecord(i+1, r.Key())
			}
			rec.Set(r)
			return e.save(ctx, rec)
		}
		var res *cluster.Resource
		var err error
		if s, ok := e.stepOf(c, ch); ok {
			if s.handler == nil {
				err = fmt.Errorf("no %s handler", s.kind)
			} else {
				err = s.handler.Execute(ctx, p, c, ch, w)
			}
		} else {
			res, err = p.Execute(ctx, c, ch, save)
		}
		if err != nil {
			failed := rec.Phase.Failed()
			rec.Phase, rec.Error = failed, fmt.Sprintf("%s %s: %v", ch.Action, ch.Key, err)
			if serr := e.save(ctx, rec); serr != nil {
				err = errors.Join(err, serr)
			}
			verb := "apply"
			if ch.Action == cluster.Delete && plan.Count(cluster.Delete) == len(plan.Changes) {
				verb = "delete"
			}
			return fmt.Errorf("%s %s of cluster %s failed after %s: %w\n(phase %s recorded in %s; run %s again to resume)",
				ch.Action, ch.Key, c.Metadata.Name, since(t0), err, failed, e.Store.Where(), verb)
		}
		if e.BeforeRecord != nil {
			e.BeforeRecord(i+1, ch.Key)
		}
		if res == nil {
			rec.Remove(ch.Key)
		} else {
			rec.Set(*res)
		}
		if err := e.save(ctx, rec); err != nil {
			return err
		}
		id := ""
		if res != nil && res.ID != "" {
			id = " (" + res.ID + ")"
		}
		fmt.Fprintf(w, "[%d/%d] %s %s%s in %s\n", i+1, len(plan.Changes), done(ch.Action), ch.Key, id, since(t0))
		e.recordStep(ctx, p.Name(), c.Metadata.Name, ch, time.Since(t0))
		if e.AfterStep != nil {
			e.AfterStep(i+1, ch)
		}
	}
	return nil
}

// waitReady returns once a provider that says when its clusters are ready (cluster.Readier) says
// c is: every node of the spec Ready, the API answering. It shows the status as it changes (and
// every kit.ProgressEvery while it does not), and gives up after WaitTimeout; then the record says
// the apply failed, and the next apply, with nothing left to change, waits again.
func (e *Engine) waitReady(ctx context.Context, p cluster.Provider, c *spec.Cluster, rec *state.Record) error {
	r, ok := p.(cluster.Readier)
	if !ok {
		return nil
	}
	bound := e.WaitTimeout
	if bound <= 0 {
		bound = cluster.DefaultWaitTimeout
	}
	every := e.ReadyInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	name := c.Metadata.Name
	w := e.out()
	t0 := time.Now()
	pending, unsupported := "", false // the last status, for the wait's error
	err := kit.Poller{What: "cluster " + name + " to be ready", Interval: every, Bound: bound,
		Report: func(status string, elapsed time.Duration) {
			fmt.Fprintf(w, "waiting for cluster %s to be ready (%s): %s\n", name, elapsed.Round(time.Second), status)
		}}.Wait(ctx, func(ctx context.Context) (string, bool, error) {
		if err := r.Ready(ctx, c); errors.Is(err, cluster.ErrUnsupported) {
			unsupported = true
			return "", true, nil
		} else if err != nil {
			pending = err.Error()
			return pending, false, nil
		}
		return "", true, nil
	})
	if err == nil && unsupported {
		return nil
	}
	if err == nil {
		fmt.Fprintf(w, "cluster %s ready: every node Ready, the API answers (waited %s)\n", name, since(t0))
		return nil
	}
	failed := rec.Phase
	if failed != state.CreationFailed && failed != state.UpdateFailed {
		failed = failed.Failed()
	}
	rec.Phase, rec.Error = failed, "not ready: "+pending
	if serr := e.save(context.WithoutCancel(ctx), rec); serr != nil {
		err = errors.Join(err, serr)
	}
	return fmt.Errorf("cluster %s: %w\n(phase %s recorded in %s; run apply again to wait again)", name, err, failed, e.Store.Where())
}

// recordStep adds a carried-out step to the history; a history that cannot be written costs a
// warning, never the apply.
func (e *Engine) recordStep(ctx context.Context, provider, name string, ch cluster.Change, took time.Duration) {
	if e.History == nil {
		return
	}
	s := history.Sample{Kind: cluster.KindOf(ch.Key), Action: string(ch.Action), Seconds: took.Seconds(), At: time.Now().UTC(), Cluster: name}
	if err := e.History.Add(context.WithoutCancel(ctx), provider, s); err != nil {
		e.log().Warnf("%v", err)
	}
}

// Estimates returns, for each change of plan, how long the history says it takes, and the total;
// with no History every estimate says "no history".
func (e *Engine) Estimates(ctx context.Context, plan *cluster.Plan) ([]history.Estimate, history.Total, error) {
	var samples []history.Sample
	if e.History != nil {
		var err error
		if samples, err = e.History.Load(ctx, plan.Provider); err != nil {
			return nil, history.Total{}, err
		}
	}
	est := make([]history.Estimate, len(plan.Changes))
	var total history.Total
	for i, ch := range plan.Changes {
		est[i] = history.For(samples, cluster.KindOf(ch.Key), string(ch.Action))
		total.Add(est[i])
	}
	return est, total, nil
}

// Costs returns the hourly cost estimate of the machines plan's changes run once applied (see
// pricing.Book.Estimate): empty without Prices, for an unknown provider, and for providers whose
// machines are this host's (local, kind). It never fails; a price it cannot get says why.
func (e *Engine) Costs(ctx context.Context, c *spec.Cluster, plan *cluster.Plan) pricing.Estimate {
	if e.Prices == nil || plan == nil {
		return pricing.Estimate{}
	}
	p, ok := e.Providers[plan.Provider].(cluster.Priced)
	if !ok {
		return pricing.Estimate{}
	}
	return e.Prices.Estimate(ctx, p, c, plan)
}

func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }

func verbing(a cluster.Action) string {
	switch a {
	case cluster.Create:
		return "creating"
	case cluster.Update:
		return "updating"
	case cluster.Replace:
		return "replacing"
	case cluster.Delete:
		return "deleting"
	}
	return string(a)
}

func done(a cluster.Action) string {
	switch a {
	case cluster.Create:
		return "created"
	case cluster.Update:
		return "updated"
	case cluster.Replace:
		return "replaced"
	case cluster.Delete:
		return "deleted"
	}
	return string(a)
}

// begin starts an operation that changes a cluster: the store must answer (before anything is
// changed) and the cluster's lock is taken; the returned func releases it.
func (e *Engine) begin(ctx context.Context, name string) (func(), error) {
	if err := e.Store.Check(ctx); err != nil {
		return nil, err
	}
	unlock, err := e.lock(ctx, name)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := unlock(); err != nil {
			e.log().Warnf("%v", err)
		}
	}, nil
}

func (e *Engine) lock(ctx context.Context, name string) (func() error, error) {
	wait := e.LockWait
	if wait == 0 {
		wait = 2 * time.Minute
	}
	cmd := e.Command
	if cmd == "" {
		cmd = "nuv"
	}
	return state.Lock(ctx, e.Store, name, state.Me(cmd), wait, func(n string) { e.log().Infof("%s", n) })
}

// Target finds the spec and provider of an existing cluster: its record's, else the first provider
// that can adopt it (a cluster made without a record). ErrNotFound if no provider knows it.
func (e *Engine) Target(ctx context.Context, name string) (*spec.Cluster, cluster.Provider, *state.Record, error) {
	rec, err := e.load(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	if rec != nil {
		p, err := e.Provider(rec.Provider)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("cluster %s: %w", name, err)
		}
		if rec.Spec == nil {
			return nil, nil, nil, fmt.Errorf("cluster %s: %w: the record has no spec", name, state.ErrCorrupt)
		}
		return rec.Spec, p, rec, nil
	}
	for _, pn := range e.ProviderNames() {
		a, ok := e.Providers[pn].(cluster.Adopter)
		if !ok {
			continue
		}
		c, err := a.Adopt(ctx, name)
		if errors.Is(err, cluster.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, nil, err
		}
		return c, e.Providers[pn], nil, nil
	}
	return nil, nil, nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
}

// DeletePlan is what Delete would do.
func (e *Engine) DeletePlan(ctx context.Context, name string) (*cluster.Plan, error) {
	c, p, rec, err := e.Target(ctx, name)
	if err != nil {
		return nil, err
	}
	actual, err := p.Observe(ctx, c, recorded(rec))
	if err != nil {
		return nil, fmt.Errorf("cluster %s: observe what exists: %w", name, err)
	}
	return cluster.DeleteAll(name, p.Name(), actual), nil
}

func recorded(rec *state.Record) []cluster.Resource {
	if rec == nil {
		return nil
	}
	return rec.Resources
}

// Delete removes everything nuv made for a cluster, dependents first, then checks that nothing is
// left and removes the record. An interrupted delete is finished by the next one.
func (e *Engine) Delete(ctx context.Context, name string) (*cluster.Plan, error) {
	return e.deleteIf(ctx, name, nil)
}

// ErrNotExpired is DeleteExpired's answer for a cluster whose record has no expiry, or one still
// ahead, by the time its lock was taken.
var ErrNotExpired = errors.New("not expired")

// DeleteExpired deletes the cluster name only if, under its lock, its state record says it expired
// at now: a cluster re-created or extended since a gc listed it is left alone (ErrNotExpired), and
// of two gcs deleting at once the second finds no record (cluster.ErrNotFound).
func (e *Engine) DeleteExpired(ctx context.Context, name string, now time.Time) (*cluster.Plan, error) {
	return e.deleteIf(ctx, name, func(rec *state.Record) error {
		if rec == nil {
			return fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
		}
		if !rec.Expired(now) {
			return fmt.Errorf("cluster %s: %w", name, ErrNotExpired)
		}
		return nil
	})
}

// deleteIf deletes a cluster under its lock; check, if set, sees its record first and may refuse.
func (e *Engine) deleteIf(ctx context.Context, name string, check func(*state.Record) error) (*cluster.Plan, error) {
	unlock, err := e.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if check != nil {
		rec, err := e.load(ctx, name)
		if err != nil {
			return nil, err
		}
		if err := check(rec); err != nil {
			return nil, err
		}
	}
	c, p, rec, err := e.Target(ctx, name)
	if err != nil {
		return nil, err
	}
	return e.deleteTargeted(ctx, name, c, p, rec)
}

// deleteTargeted deletes the cluster name of spec c and provider p (rec: its record, nil if none)
// under its lock, which the caller holds.
func (e *Engine) deleteTargeted(ctx context.Context, name string, c *spec.Cluster, p cluster.Provider, rec *state.Record) (*cluster.Plan, error) {
	if c == nil {
		return nil, fmt.Errorf("cluster %s: %w: the record has no spec", name, state.ErrCorrupt)
	}
	actual, err := p.Observe(ctx, c, recorded(rec))
	if err != nil {
		return nil, fmt.Errorf("cluster %s: observe what exists: %w", name, err)
	}
	plan := cluster.DeleteAll(name, p.Name(), actual)
	rec = e.newRecord(rec, p, c)
	if !plan.Empty() {
		rec.Phase = state.Deleting
		if err := e.save(ctx, rec); err != nil {
			return nil, err
		}
		if err := e.execute(ctx, p, c, rec, plan); err != nil {
			return plan, err
		}
	}
	left, err := p.Observe(ctx, c, nil)
	if err != nil {
		return plan, fmt.Errorf("cluster %s: check that nothing is left: %w", name, err)
	}
	if rest := mine(left); len(rest) > 0 {
		var keys []string
		for _, r := range rest {
			keys = append(keys, r.Key()+idNote(r.ID))
		}
		rec.Phase, rec.Error = state.DeletionFailed, "left behind: "+strings.Join(keys, ", ")
		_ = e.save(ctx, rec)
		return plan, fmt.Errorf("delete %s: still there after deleting: %s (phase %s recorded; run delete again)", name, strings.Join(keys, ", "), rec.Phase)
	}
	if err := e.Store.Remove(context.WithoutCancel(ctx), name); err != nil {
		return plan, err
	}
	return plan, nil
}

func idNote(id string) string {
	if id == "" {
		return ""
	}
	return " (" + id + ")"
}

// Terraform returns the Terraform module that creates what an apply of c would create, from the
// same Desired resources the plan shows. It reads nothing and writes nothing; providers without a
// Terraform target fail with cluster.ErrUnsupported.
func (e *Engine) Terraform(c *spec.Cluster) (map[string][]byte, error) {
	p, err := e.Validate(c)
	if err != nil {
		return nil, err
	}
	tw, ok := p.(cluster.TerraformWriter)
	if !ok {
		return nil, fmt.Errorf("terraform output for %s: %w: %s clusters are not cloud resources Terraform can create", c.Metadata.Name, cluster.ErrUnsupported, p.Name())
	}
	desired, err := p.Desired(c)
	if err != nil {
		return nil, fmt.Errorf("terraform output for %s: %w", c.Metadata.Name, err)
	}
	files, err := tw.Terraform(c, desired)
	if err != nil {
		return nil, fmt.Errorf("terraform output for %s: %w", c.Metadata.Name, err)
	}
	return files, nil
}
