package testcache

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Runner runs packages' tests and writes go test -json's event stream.
type Runner struct {
	Cache Cache
	// Jobs is how many packages link and run at once (go test -p).
	Jobs int
	// Timeout is each test binary's -test.timeout.
	Timeout time.Duration
	// Short passes -test.short.
	Short bool
	// TestFlags are more test binary flags, in their -test. form (-test.run=X).
	TestFlags []string
	// GoTestArgs are go test's flags for a package left to go test (-count=1, -vet=off, ...).
	GoTestArgs []string
	// Out receives the event stream; writes of one event are never interleaved.
	Out io.Writer
	// Linked is told the time each link took (nil: not told).
	Linked func(p Package, took time.Duration)
	// Ran is told how long each package's tests ran (its test binary, the link not counted) and
	// whether they passed (nil: not told). A package without test files is not told.
	Ran func(p Package, took time.Duration, passed bool)

	mu sync.Mutex
}

// event is one line of go test -json.
type event struct {
	Time    time.Time `json:",omitempty"`
	Action  string
	Package string  `json:",omitempty"`
	Test    string  `json:",omitempty"`
	Elapsed float64 `json:",omitempty"`
	Output  string  `json:",omitempty"`
}

func (r *Runner) emit(e event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, _ := json.Marshal(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Out.Write(append(b, '\n'))
}

func (r *Runner) emitRaw(line []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Out.Write(append(line, '\n'))
}

// Run runs pkgs, Jobs at a time, in their order, and says whether every package passed.
func (r *Runner) Run(ctx context.Context, pkgs []Package) bool {
	jobs := max(r.Jobs, 1)
	work := make(chan Package)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := true
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if !r.runOne(ctx, p) {
					mu.Lock()
					ok = false
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range pkgs {
		if ctx.Err() != nil { // interrupted: start nothing more
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	return ok
}

func (r *Runner) runOne(ctx context.Context, p Package) bool {
	switch {
	case p.NoTests:
		r.emit(event{Action: "start", Package: p.ImportPath})
		r.emit(event{Action: "output", Package: p.ImportPath, Output: fmt.Sprintf("?   \t%s\t[no test files]\n", p.ImportPath)})
		r.emit(event{Action: "skip", Package: p.ImportPath})
		return true
	case p.Fallback != "":
		t0 := time.Now()
		ok := r.goTest(ctx, p)
		r.ran(p, time.Since(t0), ok)
		return ok
	}
	t0 := time.Now()
	bin, linked, out, err := r.Cache.Binary(ctx, p)
	if linked && r.Linked != nil {
		r.Linked(p, time.Since(t0))
	}
	if err != nil {
		r.emit(event{Action: "start", Package: p.ImportPath})
		r.emit(event{Action: "output", Package: p.ImportPath, Output: fmt.Sprintf("%v\n%s", err, out)})
		r.emit(event{Action: "output", Package: p.ImportPath, Output: fmt.Sprintf("FAIL\t%s [build failed]\n", p.ImportPath)})
		r.emit(event{Action: "fail", Package: p.ImportPath})
		return false
	}
	t0 = time.Now()
	ok := r.runBinary(ctx, p, bin)
	r.ran(p, time.Since(t0), ok)
	return ok
}

func (r *Runner) ran(p Package, took time.Duration, passed bool) {
	if r.Ran != nil {
		r.Ran(p, took, passed)
	}
}

// runBinary runs a test binary in the package's directory through test2json (which writes the
// package's start event), adding what go test adds: the "ok"/"FAIL" line before the result.
func (r *Runner) runBinary(ctx context.Context, p Package, bin string) bool {
	args := []string{"tool", "test2json", "-t", "-p", p.ImportPath, bin, "-test.v=test2json", "-test.paniconexit0",
		"-test.count=1", fmt.Sprintf("-test.timeout=%s", r.Timeout)}
	if r.Short {
		args = append(args, "-test.short")
	}
	args = append(args, r.TestFlags...)
	cmd := exec.CommandContext(ctx, r.Cache.GoBin, args...)
	cmd.Dir = p.Dir
	// test2json and the test binary in a process group of their own: an interrupted run stops the
	// test binary too, not only test2json (what the test binaries started is the test command's
	// to reap, as after go test).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r.failed(p, err)
	}
	cmd.Stderr = cmd.Stdout             // test2json writes the binary's stderr into its events too
	if err := cmd.Start(); err != nil { // test2json -p writes the package's start event itself
		r.emit(event{Action: "start", Package: p.ImportPath})
		return r.failed(p, err)
	}
	sawResult := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) == nil && e.Test == "" && (e.Action == "pass" || e.Action == "fail") {
			sawResult = true
			word := "ok  "
			if e.Action == "fail" {
				word = "FAIL"
			}
			r.emit(event{Time: e.Time, Action: "output", Package: p.ImportPath, Output: fmt.Sprintf("%s\t%s\t%.3fs\n", word, p.ImportPath, e.Elapsed)})
		}
		r.emitRaw(append([]byte(nil), line...))
	}
	err = cmd.Wait()
	if !sawResult {
		return r.failed(p, fmt.Errorf("the test binary ended without a result: %v", err))
	}
	return err == nil
}

func (r *Runner) failed(p Package, err error) bool {
	r.emit(event{Action: "output", Package: p.ImportPath, Output: fmt.Sprintf("%v\nFAIL\t%s\n", err, p.ImportPath)})
	r.emit(event{Action: "fail", Package: p.ImportPath})
	return false
}

// goTest runs one package with go test -json (a package whose binary cannot be keyed: its build
// errors reach the stream as go test reports them).
func (r *Runner) goTest(ctx context.Context, p Package) bool {
	args := append([]string{"test", "-json"}, r.GoTestArgs...)
	args = append(args, fmt.Sprintf("-timeout=%s", r.Timeout))
	if r.Short {
		args = append(args, "-short")
	}
	args = append(args, p.ImportPath)
	if len(r.TestFlags) > 0 {
		args = append(args, "-args")
		args = append(args, r.TestFlags...)
	}
	cmd := exec.CommandContext(ctx, r.Cache.GoBin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r.failed(p, err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return r.failed(p, err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 && line[0] == '{' {
			r.emitRaw(append([]byte(nil), line...))
		} else {
			r.emit(event{Action: "output", Package: p.ImportPath, Output: string(line) + "\n"})
		}
	}
	return cmd.Wait() == nil
}
