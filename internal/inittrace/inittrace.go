// Package inittrace reads the Go runtime's package initialisation trace: the lines a Go program
// prints on standard error when run with GODEBUG=inittrace=1, one per package that runs code at
// init ("init github.com/nuv-dev/nuv/internal/proc @79 ms, 0.008 ms clock, 504 bytes, 4 allocs").
//
// nuv's rule is that its own packages do (almost) nothing at init, so that `nuv -version`, `nuv
// kube` and the daily verbs pay only for what they use (issue 24): a regular expression, template,
// table or schema a package needs is built on first use (see package lazy). This package's test
// builds nuv's programs and holds every nuv package to a small allocation budget at init;
// benches use Parse to show where a program's start-up goes.
package inittrace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Init is one package's initialisation as the runtime traced it.
type Init struct {
	// Package is the import path of the package.
	Package string
	// StartMS is when its initialisation started, in milliseconds since the runtime started.
	StartMS float64
	// ClockMS is how long its initialisation took (wall clock), in milliseconds.
	ClockMS float64
	// Bytes and Allocs are what its initialisation allocated on the heap.
	Bytes, Allocs int64
}

// Parse reads a program's standard error and returns the trace's lines in order. Lines that are
// not trace lines (the program's own messages) are skipped; a line that starts like a trace line
// ("init <package> @") but does not read as one is an error naming it.
func Parse(r io.Reader) ([]Init, error) {
	var out []Init
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		in, ok, err := ParseLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if ok {
			out = append(out, in)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read init trace: %w", err)
	}
	return out, nil
}

// ParseLine reads one trace line. ok is false for a line that is not one (it does not start with
// "init <package> @"); err is set for a line that starts like one but is malformed.
func ParseLine(line string) (in Init, ok bool, err error) {
	rest, found := strings.CutPrefix(strings.TrimRight(line, "\r"), "init ")
	if !found {
		return Init{}, false, nil
	}
	pkg, rest, found := strings.Cut(rest, " @")
	if !found || pkg == "" || strings.ContainsAny(pkg, " \t") {
		return Init{}, false, nil
	}
	bad := func(why string) (Init, bool, error) {
		return Init{}, false, fmt.Errorf("init trace line %q: %s", line, why)
	}
	// "79 ms, 0.008 ms clock, 504 bytes, 4 allocs"
	parts := strings.Split(rest, ", ")
	if len(parts) != 4 {
		return bad(`want "@<start> ms, <clock> ms clock, <bytes> bytes, <allocs> allocs"`)
	}
	in.Package = pkg
	fields := []struct {
		unit string
		f    *float64
		i    *int64
	}{{" ms", &in.StartMS, nil}, {" ms clock", &in.ClockMS, nil}, {" bytes", nil, &in.Bytes}, {" allocs", nil, &in.Allocs}}
	for k, fd := range fields {
		num, found := strings.CutSuffix(parts[k], fd.unit)
		if !found {
			return bad(fmt.Sprintf("%q does not end in %q", parts[k], fd.unit))
		}
		if fd.f != nil {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 {
				return bad(fmt.Sprintf("%q is not a number of milliseconds", num))
			}
			*fd.f = v
			continue
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil || v < 0 {
			return bad(fmt.Sprintf("%q is not a count", num))
		}
		*fd.i = v
	}
	return in, true, nil
}
