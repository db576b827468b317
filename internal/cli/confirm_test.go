package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pty returns a pseudo-terminal pair: tests type on master, Confirm reads slave.
func pty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

func TestConfirm(t *testing.T) {
	tests := []struct {
		name     string
		yes      bool
		terminal bool
		typed    string
		cancel   bool
		wantErr  string // "" means consent
		prompted bool
	}{
		{name: "--yes without a terminal", yes: true},
		{name: "--yes on a terminal asks nothing", yes: true, terminal: true},
		{name: "no terminal", wantErr: "refusing to delete x without confirmation: standard input is not a terminal, so nobody can be asked; pass --yes (or --auto-approve) to confirm; nothing was changed"},
		{name: "yes typed", terminal: true, typed: "yes\n", prompted: true},
		{name: "yes with spaces", terminal: true, typed: "  yes \n", prompted: true},
		{name: "YES is not yes", terminal: true, typed: "YES\n", prompted: true, wantErr: `delete x cancelled (answer "YES", not "yes"); nothing was changed`},
		{name: "empty answer", terminal: true, typed: "\n", prompted: true, wantErr: `(answer "", not "yes")`},
		{name: "Ctrl-C while asking", terminal: true, cancel: true, prompted: true, wantErr: "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			env := &Env{Streams: Streams{In: strings.NewReader("yes\n"), Out: &out, Err: &out}}
			if tt.terminal {
				m, s := pty(t)
				env.In = s
				if tt.typed != "" {
					if _, err := m.WriteString(tt.typed); err != nil {
						t.Fatal(err)
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			err := Confirm(ctx, env, "delete x", "Delete x?", tt.yes)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("no consent: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" && !tt.cancel && !errors.Is(err, ErrNotConfirmed) {
				t.Fatalf("%v is not ErrNotConfirmed", err)
			}
			if got := strings.Contains(out.String(), "Delete x?\n  Only 'yes' confirms; any other answer cancels.\n\n  Enter a value: "); got != tt.prompted {
				t.Fatalf("prompted=%v, want %v:\n%s", got, tt.prompted, out.String())
			}
		})
	}
}
