package kit

import (
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TestMarks: the expiry and owner as tags (RFC 3339 UTC) and as Google Cloud labels (Unix
// seconds) read back the same; a mark not set is no tag; an unreadable expiry is an error naming
// the tag; plans compare tags without the marks.
func TestMarks(t *testing.T) {
	at := time.Date(2026, 12, 2, 16, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		name  string
		marks spec.Marks
		tags  map[string]string
	}{
		{"both", spec.Marks{ExpiresAt: &at, Owner: "dir-0123456789ab"}, map[string]string{TagExpiresAt: "2026-12-02T15:00:00Z", TagOwner: "dir-0123456789ab"}},
		{"owner only", spec.Marks{Owner: "kube-0123456789ab"}, map[string]string{TagOwner: "kube-0123456789ab"}},
		{"none", spec.Marks{}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tags := MarkTags(tc.marks)
			if Map(tags) != Map(tc.tags) {
				t.Fatalf("tags %v, want %v", tags, tc.tags)
			}
			labels := MarkLabels(tc.marks)
			for k := range labels {
				if strings.ContainsAny(k+labels[k], "./:ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
					t.Errorf("label %s=%s is not a Google Cloud label", k, labels[k])
				}
			}
			for _, from := range []map[string]string{tags, labels} {
				m, err := MarksOf(from)
				if err != nil || m.Owner != tc.marks.Owner || (m.ExpiresAt == nil) != (tc.marks.ExpiresAt == nil) || m.ExpiresAt != nil && !m.ExpiresAt.Equal(at) {
					t.Errorf("MarksOf(%v) = %+v, %v", from, m, err)
				}
			}
		})
	}
	for _, bad := range []map[string]string{{TagExpiresAt: "tomorrow"}, {LabelExpiresAt: "2026-12-02"}} {
		if _, err := MarksOf(bad); err == nil || !strings.Contains(err.Error(), "expires-at") {
			t.Errorf("MarksOf(%v): %v, want an error naming the tag", bad, err)
		}
	}
	c := &spec.Cluster{Metadata: spec.Metadata{Name: "shop"}, Spec: spec.Spec{Tags: map[string]string{"team": "qa"}}, Marks: spec.Marks{ExpiresAt: &at, Owner: "dir-x"}}
	all := ClusterTags(c)
	if all[TagCluster] != "shop" || all["team"] != "qa" || all[TagOwner] != "dir-x" || all[TagExpiresAt] == "" {
		t.Fatalf("ClusterTags: %v", all)
	}
	if got := Map(Unmarked(all)); got != "team=qa" {
		t.Errorf("Unmarked: %s", got)
	}
	if got := Map(WithoutMarks(all)); got != "nuv.dev/cluster=shop,team=qa" {
		t.Errorf("WithoutMarks: %s", got)
	}
}
