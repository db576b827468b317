package kit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

func TestTags(t *testing.T) {
	user := map[string]string{"team": "shop"}
	for _, tc := range []struct {
		name string
		user map[string]string
		key  string
		want map[string]string
	}{
		{"none", nil, TagCluster, map[string]string{TagCluster: "c1"}},
		{"user tags kept", user, TagCluster, map[string]string{"team": "shop", TagCluster: "c1"}},
		{"gcp label", user, LabelCluster, map[string]string{"team": "shop", "nuv-cluster": "c1"}},
		{"user cannot take nuv's mark", map[string]string{TagCluster: "other"}, TagCluster, map[string]string{TagCluster: "c1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tags(tc.user, tc.key, "c1"); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Tags = %v, want %v", got, tc.want)
			}
		})
	}
	if len(user) != 1 {
		t.Fatalf("Tags changed the user's map: %v", user)
	}
}

func TestFieldCodecs(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    map[string]string
		enc  string
	}{
		{"empty", map[string]string{}, ""},
		{"sorted", map[string]string{"b": "2", "a": "1"}, "a=1,b=2"},
		{"empty value", map[string]string{"k": ""}, "k="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Map(tc.m); got != tc.enc {
				t.Fatalf("Map = %q, want %q", got, tc.enc)
			}
			if got := ParseMap(tc.enc); !reflect.DeepEqual(got, tc.m) {
				t.Fatalf("ParseMap(%q) = %v, want %v", tc.enc, got, tc.m)
			}
		})
	}
	for _, tc := range []struct {
		enc  string
		list []string
	}{{"", nil}, {"a", []string{"a"}}, {"b,a", []string{"b", "a"}}} {
		if got := ParseList(tc.enc); !reflect.DeepEqual(got, tc.list) {
			t.Errorf("ParseList(%q) = %q, want %q", tc.enc, got, tc.list)
		}
		if got := List(tc.list); got != tc.enc {
			t.Errorf("List(%q) = %q, want %q", tc.list, got, tc.enc)
		}
	}
	for _, tc := range []struct {
		enc string
		b   bool
	}{{"true", true}, {"false", false}, {"", false}, {"yes", false}} {
		if got := ParseBool(tc.enc); got != tc.b {
			t.Errorf("ParseBool(%q) = %v", tc.enc, got)
		}
	}
	if Bool(true) != "true" || Bool(false) != "false" {
		t.Errorf("Bool: %q %q", Bool(true), Bool(false))
	}
}

func TestKubeconfig(t *testing.T) {
	dir := t.TempDir()
	path := KubeconfigPath(dir, "shop")
	if want := filepath.Join(dir, "clusters", "shop.kubeconfig"); path != want {
		t.Fatalf("KubeconfigPath = %s, want %s", path, want)
	}
	for _, tc := range []struct {
		name     string
		env      []string
		wantEnv  []string
		wantArgs []string
	}{
		{"no env", nil, nil, []string{"-token", "shop"}},
		{"empty values left out", []string{"A", "1", "B", "", "C", "3"}, []string{"A=1", "C=3"}, []string{"-token", "shop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Kubeconfig{Context: "shop", Server: "https://127.0.0.1:6443", CA: []byte("ca"),
				User: ExecUser("client.authentication.k8s.io/v1", "nuv", tc.wantArgs, tc.env...)}.Render()
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteKubeconfig(path, b); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Fatalf("kubeconfig mode %v, want 0600", st.Mode().Perm())
			}
			server, exec := CurrentExec(path)
			if server != "https://127.0.0.1:6443" || exec == nil {
				t.Fatalf("CurrentExec = %q, %v", server, exec)
			}
			var env []string
			for _, e := range exec.Env {
				env = append(env, e.Name+"="+e.Value)
			}
			if !reflect.DeepEqual(env, tc.wantEnv) || !reflect.DeepEqual(exec.Args, tc.wantArgs) || exec.Command != "nuv" || exec.InteractiveMode != "Never" {
				t.Fatalf("exec = %+v, env %v", exec, env)
			}
		})
	}
	if s, x := CurrentExec(filepath.Join(dir, "missing")); s != "" || x != nil {
		t.Fatalf("CurrentExec of a missing file = %q, %v", s, x)
	}
	// A folder in the way of the file's folder is an error naming the path, not a half-written file.
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteKubeconfig(filepath.Join(blocked, "x.kubeconfig"), []byte("x")); err == nil || !strings.Contains(err.Error(), blocked) {
		t.Fatalf("write under a file: %v", err)
	}
}

// clock is a test clock that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestProgressDue(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	g := newProgress(c.now)
	for i, step := range []struct {
		after  time.Duration
		status string
		due    bool
	}{
		{0, "CREATING", true},                 // the first status
		{time.Second, "CREATING", false},      // unchanged, soon after
		{13 * time.Second, "CREATING", false}, // still within 15 s of the last report
		{time.Second, "CREATING", true},       // 15 s after the last report
		{time.Second, "ACTIVE", true},         // a change, at once
		{ProgressEvery - time.Nanosecond, "ACTIVE", false},
	} {
		c.t = c.t.Add(step.after)
		if got := g.Due(step.status); got != step.due {
			t.Fatalf("step %d (%s after %s): Due = %v, want %v", i, step.status, step.after, got, step.due)
		}
	}
	if g.Last() != "ACTIVE" || !g.Started() || g.Elapsed() != 31*time.Second-time.Nanosecond {
		t.Fatalf("last %q started %v elapsed %s", g.Last(), g.Started(), g.Elapsed())
	}
}

func TestPoller(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []string // one per look; the last is done
		bound    time.Duration
		cancel   bool
		wantErr  string
		reported []string
	}{
		{name: "done at once", statuses: []string{"DONE"}, reported: []string{"DONE"}},
		{name: "changes reported once each", statuses: []string{"PENDING", "PENDING", "RUNNING", "DONE"}, reported: []string{"PENDING", "RUNNING", "DONE"}},
		{name: "bound", statuses: []string{"PENDING", "PENDING", "PENDING", "PENDING", "PENDING"}, bound: 2 * time.Millisecond, wantErr: "gave up waiting for op on thing"},
		{name: "cancelled", statuses: []string{"PENDING", "PENDING"}, cancel: true, wantErr: context.Canceled.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &clock{t: time.Unix(0, 0)}
			var reported []string
			p := Poller{What: "op on thing", Interval: time.Millisecond, Bound: tc.bound, now: c.now,
				Report: func(s string, _ time.Duration) { reported = append(reported, s) }}
			i := 0
			err := p.Wait(ctx, func(context.Context) (string, bool, error) {
				s := tc.statuses[min(i, len(tc.statuses)-1)]
				i++
				c.t = c.t.Add(time.Millisecond)
				if tc.cancel && i == 2 {
					cancel()
				}
				return s, i == len(tc.statuses) && !tc.cancel && tc.bound == 0, nil
			})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(reported, tc.reported) {
					t.Fatalf("reported %q, want %q", reported, tc.reported)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			var we *cluster.WaitExpired
			if tc.bound > 0 && (!errors.As(err, &we) || we.Last != "PENDING") {
				t.Fatalf("err = %#v, want a WaitExpired whose last status is PENDING", err)
			}
		})
	}
	// A failing look ends the wait with its error.
	boom := errors.New("boom")
	if err := (Poller{Interval: time.Millisecond}).Wait(context.Background(), func(context.Context) (string, bool, error) { return "", false, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

// recorder is a test executor: it records what each handler was asked.
type recorder struct{ calls []string }

func (r *recorder) handler(what string) func(*recorder, context.Context, cluster.Change) error {
	return func(x *recorder, _ context.Context, ch cluster.Change) error {
		x.calls = append(x.calls, what+" "+ch.Key)
		return nil
	}
}

func TestKindsExecute(t *testing.T) {
	var r recorder
	ks := Kinds[*recorder, *[]string]{
		Provider: "test",
		ByKind: map[string]Kind[*recorder, *[]string]{
			"net":  {Apply: r.handler("apply"), Delete: r.handler("delete"), Terraform: func(w *[]string, res cluster.Resource) error { *w = append(*w, res.Key()); return nil }},
			"pool": {Apply: r.handler("apply"), Delete: r.handler("delete"), Replace: true},
			"disk": {Apply: r.handler("apply"), Delete: r.handler("delete"), Recreate: true},
		},
		Stranger: func(_ *recorder, ch cluster.Change) error { return errors.New("stranger " + ch.Key) },
	}
	for _, tc := range []struct {
		action  cluster.Action
		key     string
		want    string // the calls recorded
		wantErr string
		refuses bool
	}{
		{cluster.Create, "net/a", "apply net/a", "", false},
		{cluster.Update, "net/a", "apply net/a", "", false},
		{cluster.Delete, "net/a", "delete net/a", "", false},
		{cluster.Replace, "pool/p", "apply pool/p", "", false},
		{cluster.Replace, "net/a", "", "test provider: net/a cannot be replaced", true},
		{cluster.Replace, "disk/d", "delete disk/d, apply disk/d", "", false},
		{cluster.Create, "tape/t", "", "test provider: cannot create tape/t", false},
		{cluster.Delete, "tape/t", "", "stranger tape/t", false},
	} {
		t.Run(string(tc.action)+" "+tc.key, func(t *testing.T) {
			r.calls = nil
			ch := cluster.Change{Action: tc.action, Key: tc.key}
			if got := ks.Refuses(ch); got != tc.refuses {
				t.Fatalf("Refuses = %v", got)
			}
			err := ks.Execute(context.Background(), &r, ch)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if len(r.calls) > 0 {
					t.Fatalf("a refused change called %v", r.calls)
				}
				return
			}
			if err != nil || strings.Join(r.calls, ", ") != tc.want {
				t.Fatalf("err %v, calls %v, want %q", err, r.calls, tc.want)
			}
		})
	}
	var module []string
	for _, res := range []cluster.Resource{{Kind: "net", Name: "a"}, {Kind: "pool", Name: "p"}} {
		if err := ks.Terraform(&module, res); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(module, []string{"net/a"}) {
		t.Fatalf("rendered %v: want the net only (a pool has no Terraform form)", module)
	}
	if err := ks.Terraform(&module, cluster.Resource{Kind: "tape", Name: "t"}); err == nil || err.Error() != "terraform: no Terraform form for tape/t" {
		t.Fatalf("unknown kind: %v", err)
	}
}

func TestObserved(t *testing.T) {
	seen := []cluster.Resource{{Kind: "net", Name: "a", ID: "n-1"}, {Kind: "pool", Name: "p", ID: "p-1"}}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name, key string
		err       error
		wantID    string
		wantErr   string
	}{
		{"found", "pool/p", nil, "p-1", ""},
		{"not there", "pool/q", nil, "", "pool/q is not there after it was made"},
		{"observe fails", "net/a", boom, "", "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gotRecorded []cluster.Resource
			observe := func(_ context.Context, _ *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
				gotRecorded = recorded
				return seen, tc.err
			}
			r, err := Observed(context.Background(), observe, &spec.Cluster{}, tc.key, seen[0])
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || r.ID != tc.wantID || len(gotRecorded) != 1 {
				t.Fatalf("Observed = %+v, %v (recorded passed: %v)", r, err, gotRecorded)
			}
		})
	}
}
