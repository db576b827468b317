package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
)

// layouts are the named formats -datefmt accepts for -f and -s (case-insensitive), besides a Go
// reference layout ("2006-01-02 15:04").
var layouts = map[string]string{
	"ansic": time.ANSIC, "unixdate": time.UnixDate, "rubydate": time.RubyDate,
	"rfc822": time.RFC822, "rfc822z": time.RFC822Z, "rfc850": time.RFC850,
	"rfc1123": time.RFC1123, "rfc1123z": time.RFC1123Z, "rfc3339": time.RFC3339,
	"rfc3339nano": time.RFC3339Nano, "kitchen": time.Kitchen, "stamp": time.Stamp,
	"stampmilli": time.StampMilli, "datetime": time.DateTime, "date": time.DateOnly,
	"dateonly": time.DateOnly, "time": time.TimeOnly, "timeonly": time.TimeOnly,
	"iso8601": "2006-01-02T15:04:05Z0700", "compact": "20060102150405",
}

func datefmtTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("datefmt", "[-t UNIX | -m MILLIS | -d DATE [-s FORMAT]] [-z ZONE] [-f FORMAT]", `
Prints a date (default: now) in FORMAT (default UnixDate, like date(1)). FORMAT is a name
(unix, ms, rfc3339, rfc3339nano, iso8601, datetime, date, time, compact, unixdate, ansic, rfc1123,
kitchen, ...) or a Go reference layout such as "2006-01-02 15:04". The date comes from -t (seconds
since the epoch), -m (milliseconds) or -d (a DATE in the -s FORMAT, default rfc3339).`, `nuv -datefmt -f rfc3339
nuv -datefmt -t 1700000000 -z UTC -f "2006-01-02 15:04"`)
	unix := f.Int64P("timestamp", "t", 0, "seconds since the epoch")
	millis := f.Int64P("millis", "m", 0, "milliseconds since the epoch")
	date := f.StringP("date", "d", "", "a date to parse with the -s format")
	start := f.StringP("start-format", "s", "rfc3339", "format of -d")
	zone := f.StringP("zone", "z", "", "time zone for the output (UTC, Local, Europe/Rome, ...)")
	format := f.StringP("format", "f", "unixdate", "output format")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() > 0 {
		return f.usagef("unexpected arguments %q", f.Args())
	}
	t := time.Now()
	switch {
	case f.Changed("timestamp"):
		t = time.Unix(*unix, 0)
	case f.Changed("millis"):
		t = time.UnixMilli(*millis)
	case f.Changed("date"):
		var err error
		if t, err = parseDate(*date, *start); err != nil {
			return failf("datefmt", "%v", err)
		}
	}
	if *zone != "" {
		loc, err := time.LoadLocation(*zone)
		if err != nil {
			return f.usagef("unknown time zone %q", *zone)
		}
		t = t.In(loc)
	}
	fmt.Fprintln(env.Out, formatDate(t, *format))
	return nil
}

func formatDate(t time.Time, format string) string {
	switch strings.ToLower(format) {
	case "unix", "s":
		return strconv.FormatInt(t.Unix(), 10)
	case "ms", "millis":
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	if l, ok := layouts[strings.ToLower(format)]; ok {
		return t.Format(l)
	}
	return t.Format(format)
}

func parseDate(s, format string) (time.Time, error) {
	switch strings.ToLower(format) {
	case "unix", "s":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a unix time", s)
		}
		return time.Unix(n, 0), nil
	case "ms", "millis":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a time in milliseconds", s)
		}
		return time.UnixMilli(n), nil
	}
	layout := format
	if l, ok := layouts[strings.ToLower(format)]; ok {
		layout = l
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q does not match format %q", s, format)
	}
	return t, nil
}
