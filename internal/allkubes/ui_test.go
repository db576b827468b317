package allkubes

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/report"
)

func TestProgressLineIsRedrawnBelowTheOutput(t *testing.T) {
	var buf bytes.Buffer
	u := newUI(&buf, false, true, []string{"a", "bb"})
	u.running("a")
	u.running("bb")
	u.line("a", "hello")
	u.done("a", report.Passed)
	u.done("bb", report.Failed)
	u.stop()
	u.line("a", "after stop is dropped")
	out := buf.String()
	for _, want := range []string{
		"all-kubes: 0/2 done, 2 running, 0 failed",
		"\r\x1b[Ka  | hello\n",
		"a  | === PASSED\n",
		"all-kubes: 2/2 done, 0 running, 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "after stop") {
		t.Error("a line after stop was printed")
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the progress line is not erased at the end: %q", out[len(out)-20:])
	}
}

func TestNoProgressLineWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	u := newUI(&buf, false, false, []string{"a"})
	u.running("a")
	u.line("a", "x")
	u.done("a", report.Passed)
	u.stop()
	if got := buf.String(); got != "a | x\na | === PASSED\n" {
		t.Errorf("got %q", got)
	}
}
