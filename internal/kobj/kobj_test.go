package kobj

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestFindConditionAndSuffix(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Progressing", "status": "True"},
		map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "0/1 ready", "observedGeneration": int64(3)},
		"not a map",
	}}}}
	tests := []struct {
		typ, suffix string
		og          int64
	}{
		{"Available", "; Available=False (MinimumReplicasUnavailable): 0/1 ready", 3},
		{"Progressing", "; Progressing=True", 0},
		{"Ready", "", 0},
	}
	for _, tt := range tests {
		c := FindCondition(u, tt.typ)
		if got := c.Suffix(); got != tt.suffix {
			t.Errorf("%s: suffix %q, want %q", tt.typ, got, tt.suffix)
		}
		if c != nil && c.ObservedGeneration != tt.og {
			t.Errorf("%s: observedGeneration %d, want %d", tt.typ, c.ObservedGeneration, tt.og)
		}
	}
	// JSON-decoded numbers are float64
	u.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": float64(7)}}
	if c := FindCondition(u, "Ready"); c == nil || c.ObservedGeneration != 7 {
		t.Fatalf("float64 observedGeneration: %+v", c)
	}
}
