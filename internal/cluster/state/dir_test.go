package state_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestDirTakeoverProcesses races separate processes (this test binary, re-run as contenders) to
// take over the locks of dead holders in one directory: each contender first reads every dead
// holder, then, once all are ready, tries to take over each of them. Exactly one process must win
// each lock.
func TestDirTakeoverProcesses(t *testing.T) {
	if dir := os.Getenv("NUV_STATETEST_CONTENDER_DIR"); dir != "" {
		contend(t, dir)
		return
	}
	const rounds, procs = 50, 4
	dir := t.TempDir()
	d := state.Dir{Path: dir}
	for r := 0; r < rounds; r++ {
		dead := state.Me("nuv cluster apply (killed)")
		dead.PID, dead.Start = 1<<22-1, uint64(r+1)
		if _, _, err := d.TryLock(t.Context(), fmt.Sprintf("r%d", r), dead); err != nil {
			t.Fatal(err)
		}
	}
	var outs []*strings.Builder
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDirTakeoverProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "NUV_STATETEST_CONTENDER_DIR="+dir, "NUV_STATETEST_CONTENDER="+strconv.Itoa(i))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	// Start them together once every one has read the dead holders.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		if len(ready) == procs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d contenders got ready", len(ready), procs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wins := map[string][]string{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("contender %d: %v\n%s", i, err, outs[i])
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			if lock, ok := strings.CutPrefix(line, "won "); ok {
				wins[lock] = append(wins[lock], strconv.Itoa(i))
			}
		}
	}
	for r := 0; r < rounds; r++ {
		name := fmt.Sprintf("r%d", r)
		if len(wins[name]) != 1 {
			t.Errorf("lock %s was taken over by %d processes (%v), want exactly one", name, len(wins[name]), wins[name])
			continue
		}
		h, err := d.Holder(t.Context(), name)
		if err != nil || h == nil || h.Command != "contender "+wins[name][0] {
			t.Errorf("lock %s is held by %+v (%v), want contender %s", name, h, err, wins[name][0])
		}
	}
}

// contend is one contender process of TestDirTakeoverProcesses.
func contend(t *testing.T, dir string) {
	d := state.Dir{Path: dir}
	me := state.Me("contender " + os.Getenv("NUV_STATETEST_CONTENDER"))
	var seen []*state.Holder
	for r := 0; ; r++ {
		h, err := d.Holder(t.Context(), fmt.Sprintf("r%d", r))
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if !h.Gone() {
			t.Fatalf("r%d: holder %+v is not gone", r, h)
		}
		seen = append(seen, h)
	}
	if err := os.WriteFile(filepath.Join(dir, "ready-"+strconv.Itoa(os.Getpid())), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for r, was := range seen {
		name := fmt.Sprintf("r%d", r)
		_, cur, err := d.TakeOver(t.Context(), name, was, me)
		switch {
		case err == nil:
			fmt.Printf("won %s\n", name)
		case !errors.Is(err, state.ErrLocked) || cur == nil:
			t.Fatalf("%s: %v (holder %+v)", name, err, cur)
		}
	}
}
