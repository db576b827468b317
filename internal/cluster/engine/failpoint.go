package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// Failpoints for kill tests, set from the environment of a nuv process:
//
//	NUV_FAILPOINT_KILL_AFTER_STEP=N     die as kill -9 would right after step N was recorded
//	NUV_FAILPOINT_KILL_BEFORE_RECORD=N  die as kill -9 would right after step N's provider call
//	                                    returned (or recorded a resource along the way), before
//	                                    the record says what it made
//	NUV_FAILPOINT_KILL_BEFORE_RECORD=N.K  the same before the K-th record of step N (a provider
//	                                    that records its intent before a long call, as kind's
//	                                    create does, is killed after the call with N.2)
//
// An apply killed at either one must be resumed by the next apply without making anything twice.
const (
	EnvKillAfterStep    = "NUV_FAILPOINT_KILL_AFTER_STEP"
	EnvKillBeforeRecord = "NUV_FAILPOINT_KILL_BEFORE_RECORD"
)

// SetFailpoints arms the failpoints getenv names (none when both variables are unset); an error
// names a variable that is not a step number.
func (e *Engine) SetFailpoints(getenv func(string) string) error {
	after, err := stepOf(getenv, EnvKillAfterStep)
	if err != nil {
		return err
	}
	before, nth, err := recordOf(getenv, EnvKillBeforeRecord)
	if err != nil {
		return err
	}
	if after > 0 {
		e.AfterStep = func(step int, _ cluster.Change) {
			if step == after {
				killSelf()
			}
		}
	}
	if before > 0 {
		seen := 0
		e.BeforeRecord = func(step int, _ string) {
			if step != before {
				return
			}
			if seen++; seen == nth {
				killSelf()
			}
		}
	}
	return nil
}

func stepOf(getenv func(string) string, name string) (int, error) {
	v := getenv(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q is not a step number (1, 2, ...)", name, v)
	}
	return n, nil
}

// recordOf reads "N" or "N.K" (step N, its K-th record; K defaults to 1).
func recordOf(getenv func(string) string, name string) (step, nth int, err error) {
	v := getenv(name)
	if v == "" {
		return 0, 0, nil
	}
	stepPart, nthPart, dotted := strings.Cut(v, ".")
	step, err = strconv.Atoi(stepPart)
	nth = 1
	if err == nil && dotted {
		nth, err = strconv.Atoi(nthPart)
	}
	if err != nil || step < 1 || nth < 1 {
		return 0, 0, fmt.Errorf("%s=%q is not a step number (1, 2, ...) or a step and a record (1.2)", name, v)
	}
	return step, nth, nil
}

// killSelf dies as kill -9 would: no deferred function runs, nothing is saved or released.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
