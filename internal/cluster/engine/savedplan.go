package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// SavedPlanFormat names the format of saved plan files (`nuv cluster plan -out FILE`).
const SavedPlanFormat = "nuv.dev/saved-plan/v1"

// ErrStalePlan is returned when a saved plan no longer describes what apply would do: the world
// (what the provider observes) or the state record changed since the plan was made.
var ErrStalePlan = errors.New("saved plan is stale")

// SavedPlan is what `nuv cluster plan -out FILE` writes and `nuv cluster apply FILE` carries out
// as it is, as terraform's saved plans: the specs, the plans, and digests of what they were made
// against, so that an apply refuses a plan the world has moved away from.
type SavedPlan struct {
	Format  string    `json:"format"`
	Created time.Time `json:"created"`
	// Store is where the state records were read (state.Store.Where); apply must use the same.
	Store    string         `json:"store"`
	Clusters []SavedCluster `json:"clusters"`
	// Digest is the SHA-256 of Clusters as written: a file changed by hand is refused.
	Digest string `json:"digest"`
}

// SavedCluster is one cluster's plan with what it was made against.
type SavedCluster struct {
	Spec *spec.Cluster `json:"spec"`
	Plan *cluster.Plan `json:"plan"`
	// SpecDigest, World and Record are SHA-256 digests of the spec, of the resources the
	// provider observed, and of the state record ("none" without one).
	SpecDigest string `json:"specDigest"`
	World      string `json:"world"`
	Record     string `json:"record"`
}

// SavePlan plans c (reading only, as Plan) and returns the plan with the digests a later
// ApplySaved checks.
func (e *Engine) SavePlan(ctx context.Context, c *spec.Cluster) (SavedCluster, error) {
	p, err := e.Validate(c)
	if err != nil {
		return SavedCluster{}, err
	}
	rec, err := e.load(ctx, c.Metadata.Name)
	if err != nil {
		return SavedCluster{}, err
	}
	world, err := e.worldDigest(ctx, p, c, rec)
	if err != nil {
		return SavedCluster{}, err
	}
	plan, err := e.Plan(ctx, c)
	if err != nil {
		return SavedCluster{}, err
	}
	sd, err := digestJSON(c)
	if err != nil {
		return SavedCluster{}, err
	}
	rd, err := recordDigest(rec)
	if err != nil {
		return SavedCluster{}, err
	}
	return SavedCluster{Spec: c, Plan: plan, SpecDigest: sd, World: world, Record: rd}, nil
}

// ApplySaved carries out a saved plan as it is. Under the cluster's lock, before anything is
// written, it checks that the state record and the observed world are those the plan was made
// against and that planning again gives the same plan; otherwise it fails with ErrStalePlan and
// changes nothing.
func (e *Engine) ApplySaved(ctx context.Context, sc SavedCluster) (*cluster.Plan, error) {
	return e.Apply(ctx, sc.Spec, ApplyOptions{Check: func(ctx context.Context, rec *state.Record, plan *cluster.Plan) error {
		return e.verifySaved(ctx, sc, rec, plan)
	}})
}

// CheckSaved tells, reading only, whether ApplySaved of sc would go ahead (nil) or refuse
// (ErrStalePlan): the CLI checks every cluster of a saved plan before it applies any.
func (e *Engine) CheckSaved(ctx context.Context, sc SavedCluster) error {
	rec, err := e.load(ctx, sc.Spec.Metadata.Name)
	if err != nil {
		return err
	}
	plan, err := e.Plan(ctx, sc.Spec)
	if err != nil {
		return err
	}
	return e.verifySaved(ctx, sc, rec, plan)
}

func (e *Engine) verifySaved(ctx context.Context, sc SavedCluster, rec *state.Record, plan *cluster.Plan) error {
	name := sc.Spec.Metadata.Name
	rd, err := recordDigest(rec)
	if err != nil {
		return err
	}
	if rd != sc.Record {
		return fmt.Errorf("cluster %s: %w: its state record changed since the plan was made (an apply, delete or state command ran); nothing was changed: make a new plan", name, ErrStalePlan)
	}
	p, err := e.Provider(sc.Spec.Spec.Provider)
	if err != nil {
		return err
	}
	world, err := e.worldDigest(ctx, p, sc.Spec, rec)
	if err != nil {
		return err
	}
	if world != sc.World {
		return fmt.Errorf("cluster %s: %w: what exists changed since the plan was made; nothing was changed: make a new plan", name, ErrStalePlan)
	}
	if !samePlan(plan, sc.Plan) {
		return fmt.Errorf("cluster %s: %w: planning again gives another plan (the add-ons index or nuv changed); nothing was changed: make a new plan", name, ErrStalePlan)
	}
	return nil
}

// WriteSavedPlan writes sp to path atomically, readable by its owner only (0600): a plan names the
// cluster's resources and the spec it applies.
func WriteSavedPlan(path string, sp *SavedPlan) error {
	sp.Format = SavedPlanFormat
	d, err := digestJSON(sp.Clusters)
	if err != nil {
		return err
	}
	sp.Digest = d
	b, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		return fmt.Errorf("saved plan %s: %w", path, err)
	}
	return fsutil.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// ReadSavedPlan reads a plan written by WriteSavedPlan; a file of another format, or one changed
// since it was written, is refused with a message naming it.
func ReadSavedPlan(path string) (*SavedPlan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("saved plan: %w", err)
	}
	var sp SavedPlan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return nil, fmt.Errorf("%s: not a saved plan of nuv (`nuv cluster plan -out FILE` writes one): %v", path, err)
	}
	if sp.Format != SavedPlanFormat {
		return nil, fmt.Errorf("%s: not a saved plan of nuv (format %q, want %q)", path, sp.Format, SavedPlanFormat)
	}
	d, err := digestJSON(sp.Clusters)
	if err != nil {
		return nil, err
	}
	if d != sp.Digest || len(sp.Clusters) == 0 {
		return nil, fmt.Errorf("%s: the saved plan was changed after nuv wrote it (digest mismatch); make a new plan", path)
	}
	for i := range sp.Clusters {
		sc := &sp.Clusters[i]
		if sc.Spec == nil || sc.Plan == nil {
			return nil, fmt.Errorf("%s: cluster %d of the saved plan has no spec or plan", path, i+1)
		}
		sc.Spec.Source = path
	}
	return &sp, nil
}

// worldDigest observes c's resources and digests what the plan is computed from.
func (e *Engine) worldDigest(ctx context.Context, p cluster.Provider, c *spec.Cluster, rec *state.Record) (string, error) {
	actual, err := p.Observe(ctx, c, recorded(rec))
	if err != nil {
		return "", fmt.Errorf("cluster %s: observe what exists: %w", c.Metadata.Name, err)
	}
	type seen struct {
		Key     string            `json:"key"`
		ID      string            `json:"id,omitempty"`
		Fields  map[string]string `json:"fields,omitempty"`
		Foreign bool              `json:"foreign,omitempty"`
		Broken  string            `json:"broken,omitempty"`
	}
	out := make([]seen, 0, len(actual))
	for _, r := range actual {
		out = append(out, seen{r.Key(), r.ID, r.Fields, r.Foreign, r.Broken})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return digestJSON(out)
}

func recordDigest(rec *state.Record) (string, error) {
	if rec == nil {
		return "none", nil
	}
	return digestJSON(rec)
}

func samePlan(a, b *cluster.Plan) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func digestJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
