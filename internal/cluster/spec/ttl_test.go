package spec

import (
	"strings"
	"testing"
	"time"
)

func TestParseTTL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"4h", 4 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"2d", 48 * time.Hour, ""},
		{"366d", MaxTTL, ""},
		{"367d", 0, "at most 366d"},
		{"0s", 0, "must be positive"},
		{"-1h", 0, "must be positive"},
		{"soon", 0, `"soon" is not a duration`},
		{"1.5d", 0, "is not a duration"},
		{"", 0, "is not a duration"},
	} {
		got, err := ParseTTL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTTL(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
