package allkubes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/runner"
	"github.com/nuv-dev/nuv/internal/upgrade"
)

// killGrace is how long a child's process group has between SIGTERM and SIGKILL.
const killGrace = 3 * time.Second

type childRun struct {
	status   report.Status
	exitCode int
	message  string
	lastLine string
}

// runChild runs one attempt of the target as a child process in its own process group. Its
// combined output goes line by line to the cluster's log and to the UI. On timeout or cancellation
// the whole group gets SIGTERM, then SIGKILL after killGrace; after the child exits, whatever is
// left of its group is killed too, so no grandchild outlives the run.
func (o *Options) runChild(ctx context.Context, c Cluster, p *probe, cl cell, sc scratch, logf io.Writer, ui *ui) childRun {
	actx := ctx
	var cancel context.CancelFunc = func() {}
	if o.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, o.Timeout)
	}
	defer cancel()

	pr, pw := io.Pipe()
	fmt.Fprintf(logf, "$ nuv %s   # cluster %s, type %s, server %s\n", strings.Join(o.Command, " "), c.Name, p.typ, p.version)
	if cl.path == report.PathUpgrade {
		fmt.Fprintf(logf, "# upgrade path: %s=%s\n", upgrade.EnvFrom, o.UpgradeFrom)
	}
	// The context is not the runner's: the timeout and Ctrl-C are handled below, group-wide.
	child, err := runner.Start(context.WithoutCancel(ctx), runner.Cmd{Path: o.Exe, Args: o.Command, Dir: o.Project,
		Env: o.childEnv(c, p, cl, sc), Stdout: pw, Stderr: pw, Group: true})
	if err != nil {
		pw.Close()
		return childRun{status: report.Failed, exitCode: -1, message: o.Masker.Mask(err.Error())}
	}
	pgid := child.PID()

	lines := make(chan string, 1)
	go func() {
		last := ""
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := o.Masker.Mask(sc.Text())
			fmt.Fprintln(logf, line)
			ui.line(cl.label, line)
			if strings.TrimSpace(line) != "" {
				last = line
			}
		}
		io.Copy(io.Discard, pr)
		lines <- last
	}()

	waited := make(chan error, 1)
	go func() { waited <- child.Wait() }()
	var werr error
	stopped := false
	select {
	case werr = <-waited:
	case <-actx.Done():
		stopped = true
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case werr = <-waited:
		case <-time.After(killGrace):
			syscall.Kill(-pgid, syscall.SIGKILL)
			werr = <-waited
		}
	}
	// Leftovers of the group (a background job of a task) go too.
	syscall.Kill(-pgid, syscall.SIGKILL)
	pw.Close()
	last := <-lines

	run := childRun{lastLine: last, exitCode: exitCode(werr)}
	switch {
	case stopped && ctx.Err() != nil:
		run.status, run.message = report.Cancelled, "cancelled (interrupted)"
	case stopped:
		run.status, run.message = report.TimedOut, fmt.Sprintf("ended after --timeout %s", o.Timeout)
	case werr == nil:
		run.status = report.Passed
	default:
		run.status = report.Failed
		fmt.Fprintf(logf, "nuv all-kubes: %s exited with status %d\n", cl.label, run.exitCode)
	}
	return run
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	return runner.ExitCode(err)
}
