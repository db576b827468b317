package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain error", errors.New("boom"), 1},
		{"usage error", Usagef("bad %s", "flag"), 2},
		{"explicit code", Exit(201, errors.New("task failed")), 201},
		{"wrapped explicit code", fmt.Errorf("run: %w", Exit(7, nil)), 7},
		{"wrapped usage error", fmt.Errorf("cluster: %w", Usagef("unknown flavor")), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Fatalf("ExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoggerVerbosity(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, 1)
	l.Infof("info")
	l.Warnf("careful")
	l.V(1).Infof("detail")
	l.V(2).Infof("hidden")
	want := "info\nwarning: careful\ndetail\n"
	if buf.String() != want {
		t.Fatalf("log = %q, want %q", buf.String(), want)
	}
	if l.V(2).Enabled() || !l.V(1).Enabled() {
		t.Fatal("Enabled does not follow the verbosity")
	}
	Quiet().Infof("nothing") // must not panic
}
