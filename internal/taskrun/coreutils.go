package taskrun

import (
	"os"
	"strconv"
	_ "unsafe" // go:linkname
)

// goCoreUtils is go-task's switch for its Go core utilities (cat, ls, mkdir, cp, rm, ...). go-task
// sets it once, in a package init, from TASK_CORE_UTILS (default: on for Windows only) and offers
// no option for it; nuv needs it on everywhere so tasks run with no coreutils installed. Reaching
// the variable by name is tied to the pinned go-task version (v3.54.0); the build breaks loudly, not
// silently, if a new version renames it.
//
//go:linkname goCoreUtils github.com/go-task/task/v3/internal/execext.useGoCoreUtils
var goCoreUtils bool

// switchCoreUtils turns go-task's core utilities on unless TASK_CORE_UTILS (as seen now, after the
// run's environment is applied) says otherwise, and returns a func restoring the previous value.
func switchCoreUtils() (restore func()) {
	prev := goCoreUtils
	on := true
	if v, err := strconv.ParseBool(os.Getenv("TASK_CORE_UTILS")); err == nil {
		on = v
	}
	goCoreUtils = on
	return func() { goCoreUtils = prev }
}
