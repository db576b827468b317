package state_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
)

func TestDirConformance(t *testing.T) {
	var dirs sync.Map // *testing.T -> directory
	statetest.Run(t, statetest.Backend{
		New: func(t *testing.T) state.Store {
			d, _ := dirs.LoadOrStore(t, t.TempDir())
			return state.Dir{Path: d.(string)}
		},
		Corrupt: func(t *testing.T, s state.Store, name string) {
			d := s.(state.Dir).Path
			if err := os.WriteFile(filepath.Join(d, name+".json"), []byte(`{"name": "`+name+`", "phase": `), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	})
}

func TestDirRecordMode(t *testing.T) {
	d := state.Dir{Path: filepath.Join(t.TempDir(), "state")}
	if err := d.Save(t.Context(), &state.Record{Name: "a", Provider: "local"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(d.Path, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, want 0600", st.Mode().Perm())
	}
}
