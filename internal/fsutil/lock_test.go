package fsutil

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestLockWaitsAndSaysSoOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	release, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Another holder (flock is per open file): waits, says so once, gets it after the release.
	waits := 0
	done := make(chan error, 1)
	go func() {
		r, err := Lock(context.Background(), path, func() { waits++ })
		if err == nil {
			r()
		}
		done <- err
	}()
	time.Sleep(700 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if waits != 1 {
		t.Errorf("waiting called %d times, want 1", waits)
	}
	// A cancelled wait gives up with the context's error.
	release, _ = Lock(context.Background(), path, nil)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled wait: %v", err)
	}
}
