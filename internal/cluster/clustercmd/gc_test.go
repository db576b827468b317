package clustercmd

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// TestGCReport: gc's report of what it deleted and left alone, as the table (a gc and a dry run)
// and as JSON, against golden files; each outcome of a delete settles a row as the table says.
func TestGCReport(t *testing.T) {
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	now := *at("2026-12-02T12:00:00Z")
	base := []gcRow{
		{Name: "old", Provider: "local", ExpiresAt: at("2026-12-02T10:00:00Z"), Reason: expiredText(*at("2026-12-02T10:00:00Z"), now)},
		{Name: "ci-7", Provider: "eks", ExpiresAt: at("2026-12-02T11:30:00Z"), Where: "us-east-1", Reason: "record lost, found by tag; " + expiredText(*at("2026-12-02T11:30:00Z"), now)},
		{Name: "raced", Provider: "aks", ExpiresAt: at("2026-12-02T09:00:00Z"), Reason: expiredText(*at("2026-12-02T09:00:00Z"), now)},
		{Name: "moved", Provider: "local", ExpiresAt: at("2026-12-02T11:00:00Z"), Reason: expiredText(*at("2026-12-02T11:00:00Z"), now)},
		{Name: "broken", Provider: "gke", ExpiresAt: at("2026-12-02T08:00:00Z"), Reason: expiredText(*at("2026-12-02T08:00:00Z"), now)},
		{Name: "theirs", Provider: "gke", ExpiresAt: at("2026-12-01T08:00:00Z"), Where: "project p us-central1", Result: gcSkipped, Reason: "owned by another state store (dir-0a1b2c3d4e5f; this one is dir-ffeeddccbbaa)"},
		{Name: "later", Provider: "eks", ExpiresAt: at("2026-12-02T16:00:00Z"), Where: "us-east-1", Result: gcSkipped, Reason: "record lost; not expired: expires at 2026-12-02T16:00:00Z"},
	}
	outcomes := []error{nil, nil, fmt.Errorf(`"raced": %w`, cluster.ErrNotFound), fmt.Errorf("cluster moved: %w", engine.ErrNotExpired),
		errors.New("delete cluster/broken of cluster broken failed after 1s: permission denied")}
	for _, tc := range []struct {
		golden string
		format string
		dryRun bool
	}{
		{"gc.golden", cli.FormatTable, false},
		{"gc-dry-run.golden", cli.FormatTable, true},
		{"gc.json.golden", cli.FormatJSON, false},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			rows := append([]gcRow{}, base...)
			for i := range rows {
				if rows[i].Result == "" {
					rows[i].Result = gcWouldDelete
					if !tc.dryRun {
						rows[i].settle(outcomes[i])
					}
				}
			}
			var b bytes.Buffer
			if err := writeGC(&b, &cli.OutputOption{Format: tc.format}, rows, tc.dryRun); err != nil {
				t.Fatal(err)
			}
			goldenForm(t, tc.golden, b.String())
		})
	}
	for _, tc := range []struct {
		err          error
		result, want string
	}{
		{nil, gcDeleted, ""},
		{fmt.Errorf("x: %w", state.ErrLocked), gcSkipped, "another nuv holds its lock: x: " + state.ErrLocked.Error()},
		{fmt.Errorf("cluster x: %w: owned by another state store (a; this one is b)", engine.ErrNotReapable), gcSkipped, "owned by another state store (a; this one is b)"},
		{errors.New("boom"), gcFailed, "boom"},
	} {
		r := gcRow{Result: gcWouldDelete}
		r.settle(tc.err)
		if r.Result != tc.result || tc.want != "" && r.Reason != tc.want {
			t.Errorf("settle(%v): %s %q, want %s %q", tc.err, r.Result, r.Reason, tc.result, tc.want)
		}
	}
}
