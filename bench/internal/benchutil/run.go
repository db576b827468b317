package benchutil

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Exit ends a benchmark program: for a non-nil err it prints "name: err" on stderr and exits 1.
// A program's main is flag.Parse() then benchutil.Exit("bench/x", run(...)).
func Exit(name string, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Workspace is a benchmark's temporary directory holding a nuv built from the checkout.
type Workspace struct {
	Dir string // the temporary directory, removed by Close
	Nuv string // the nuv binary, Dir/nuv
}

// NewWorkspace makes a temporary directory named prefix* and builds nuv into it (announcing the
// build on stdout, as it takes a while). The caller defers Close.
func NewWorkspace(prefix string) (*Workspace, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	w := &Workspace{Dir: dir, Nuv: filepath.Join(dir, "nuv")}
	fmt.Println("building nuv ...")
	if err := BuildNuv(w.Nuv); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close removes the workspace's directory.
func (w *Workspace) Close() error { return os.RemoveAll(w.Dir) }

// Nuv runs a nuv binary as a user does, one whole process per call, and times it.
type Nuv struct {
	Bin string   // the nuv binary
	Env []string // its environment (nil: this process's)
	Dir string   // its working directory ("": this process's)
}

// With returns a copy of n whose environment has extra appended (later entries win).
func (n Nuv) With(extra ...string) Nuv {
	env := n.Env
	if env == nil {
		env = os.Environ()
	}
	n.Env = append(append([]string(nil), env...), extra...)
	return n
}

// Run runs nuv with args and returns the wall time of the process and its combined output. A
// failure's error names the command, wraps the *exec.ExitError and carries the output.
func (n Nuv) Run(args ...string) (time.Duration, string, error) {
	cmd := exec.Command(n.Bin, args...)
	cmd.Env, cmd.Dir = n.Env, n.Dir
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(t0)
	if err != nil {
		return d, string(out), fmt.Errorf("nuv %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return d, string(out), nil
}

// Repeat calls f runs times and returns the durations it measured; it stops at the first error.
func Repeat(runs int, f func() (time.Duration, error)) ([]time.Duration, error) {
	var ds []time.Duration
	for i := 0; i < runs; i++ {
		d, err := f()
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// MedianOf times f runs times and returns the median; it stops at the first error.
func MedianOf(runs int, f func() error) (time.Duration, error) {
	ds, err := Repeat(runs, func() (time.Duration, error) {
		t0 := time.Now()
		err := f()
		return time.Since(t0), err
	})
	if err != nil {
		return 0, err
	}
	return Median(ds), nil
}

// ServeLoopback listens on a free 127.0.0.1 port and runs serve on it in the background until
// stop, which cancels serve's context and waits for it to return. addr is host:port.
func ServeLoopback(serve func(ctx context.Context, ln net.Listener) error) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	return ln.Addr().String(), func() { cancel(); <-done }, nil
}

// StatsHeader is the header of the markdown table of StatsRow rows.
const StatsHeader = "| figure | median | min | max | target |\n|---|---|---|---|---|\n"

// StatsRow is a StatsHeader table row: the median, minimum and maximum of ds in milliseconds and
// the target, e.g. "| plan | 41.2 ms | 39.0 | 55.1 | <= 300 ms |".
func StatsRow(figure string, ds []time.Duration, target string) string {
	m, lo, hi := Stats(ds)
	return fmt.Sprintf("| %s | %.1f ms | %.1f | %.1f | %s |\n", figure, MS(m), MS(lo), MS(hi), target)
}
