package cli

import (
	"fmt"
	"io"
	"sync"
)

// Logger is nuv's one logging interface: Infof for what a user should see, Warnf for problems that
// do not stop the command, V(n) for verbose detail enabled with NUV_VERBOSE=n. (`nuv -v` is
// `nuv -version`, as in the ancestor CLI; verbosity has no flag, so no command's -v can mean both.)
type Logger interface {
	Infof(format string, a ...any)
	Warnf(format string, a ...any)
	V(level int) InfoLogger
}

// InfoLogger logs at one verbosity level; Enabled tells whether anything would be written.
type InfoLogger interface {
	Infof(format string, a ...any)
	Enabled() bool
}

// NewLogger writes to w, showing V(n) messages for n <= verbosity.
func NewLogger(w io.Writer, verbosity int) Logger { return &writerLogger{w: w, verbosity: verbosity} }

// Quiet returns a Logger that discards everything; for tests.
func Quiet() Logger { return quiet{} }

type writerLogger struct {
	mu        sync.Mutex
	w         io.Writer
	verbosity int
}

func (l *writerLogger) printf(prefix, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf(format, a...)
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		msg += "\n"
	}
	fmt.Fprint(l.w, prefix+msg)
}

func (l *writerLogger) Infof(format string, a ...any) { l.printf("", format, a...) }
func (l *writerLogger) Warnf(format string, a ...any) { l.printf("warning: ", format, a...) }
func (l *writerLogger) V(level int) InfoLogger {
	return verboseLogger{l: l, on: level <= l.verbosity}
}

type verboseLogger struct {
	l  *writerLogger
	on bool
}

func (v verboseLogger) Infof(format string, a ...any) {
	if v.on {
		v.l.printf("", format, a...)
	}
}
func (v verboseLogger) Enabled() bool { return v.on }

type quiet struct{}

func (quiet) Infof(string, ...any) {}
func (quiet) Warnf(string, ...any) {}
func (quiet) V(int) InfoLogger     { return quietInfo{} }

type quietInfo struct{}

func (quietInfo) Infof(string, ...any) {}
func (quietInfo) Enabled() bool        { return false }
