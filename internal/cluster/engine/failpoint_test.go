package engine

import (
	"context"
	"strings"
	"testing"
)

// TestBeforeRecordFailpoint: the failpoint before the record fires after the provider made the
// step's resource and before the record names it; a table of environments arms the failpoints
// or refuses a value that is not a step number, naming the variable.
func TestBeforeRecordFailpoint(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	e, _ := newEngine(t, m)
	var seen []string
	e.BeforeRecord = func(step int, key string) {
		rec, err := e.Store.Load(ctx, "dev")
		if err != nil {
			t.Fatal(err)
		}
		recorded := false
		for _, r := range rec.Resources {
			recorded = recorded || r.Key() == key
		}
		_, made := m.objects[key]
		seen = append(seen, key)
		if !made || recorded {
			t.Errorf("step %d (%s): made %v, recorded %v; want made and not yet recorded", step, key, made, recorded)
		}
	}
	if _, err := e.Apply(ctx, specOf("dev", 1), ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "net/dev group/g0" {
		t.Fatalf("the failpoint fired for %q, want each step once", seen)
	}

	tests := []struct {
		name          string
		env           map[string]string
		after, before bool
		err           string
	}{
		{"none", nil, false, false, ""},
		{"after a step", map[string]string{EnvKillAfterStep: "2"}, true, false, ""},
		{"before a record", map[string]string{EnvKillBeforeRecord: "1"}, false, true, ""},
		{"before the second record of a step", map[string]string{EnvKillBeforeRecord: "1.2"}, false, true, ""},
		{"record zero", map[string]string{EnvKillBeforeRecord: "1.0"}, false, false, EnvKillBeforeRecord + `="1.0"`},
		{"record not a number", map[string]string{EnvKillBeforeRecord: "1.x"}, false, false, EnvKillBeforeRecord + `="1.x"`},
		{"not a number", map[string]string{EnvKillBeforeRecord: "first"}, false, false, EnvKillBeforeRecord + `="first"`},
		{"zero", map[string]string{EnvKillAfterStep: "0"}, false, false, EnvKillAfterStep + `="0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Engine{}
			err := e.SetFailpoints(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil || (e.AfterStep != nil) != tt.after || (e.BeforeRecord != nil) != tt.before {
				t.Fatalf("err %v, after armed %v, before armed %v", err, e.AfterStep != nil, e.BeforeRecord != nil)
			}
		})
	}
}
