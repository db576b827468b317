package taskrun

import (
	"errors"

	taskerrors "github.com/go-task/task/v3/errors"
)

// exitCodeOf is the go-task CLI's exit code for err: with exitCode (-x) a failing command's own
// code, else the error's go-task code (TaskNotFound=200, ...), else 1.
func exitCodeOf(err error, exitCode bool) int {
	if err == nil {
		return taskerrors.CodeOk
	}
	if exitCode {
		var re *taskerrors.TaskRunError
		if errors.As(err, &re) {
			return re.TaskExitCode()
		}
	}
	var te taskerrors.TaskError
	if errors.As(err, &te) {
		return te.Code()
	}
	return taskerrors.CodeUnknown
}
