package app

import (
	"errors"
	"testing"
)

func TestErrorLine(t *testing.T) {
	tests := []struct{ err, want string }{
		{"cluster dev not found", "nuv: cluster dev not found"},
		{"nuv cluster create: unknown flavor", "nuv cluster create: unknown flavor"},
		{"nuv: already prefixed", "nuv: already prefixed"},
		{"nuvola is not nuv", "nuv: nuvola is not nuv"},
	}
	for _, tt := range tests {
		if got := errorLine(errors.New(tt.err)); got != tt.want {
			t.Errorf("errorLine(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
