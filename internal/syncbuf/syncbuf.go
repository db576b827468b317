// Package syncbuf is a byte buffer that goroutines or child processes write while a test reads
// it: the log of a server, an emulator or a command a test waits on. It imports nothing of nuv,
// so any test helper can use it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent Write and String. The zero value is empty and keeps
// everything written.
type Buffer struct {
	// Limit, if positive, bounds what is kept: once the buffer holds more than Limit bytes,
	// further writes are dropped (and reported written), keeping enough to say why something
	// failed.
	Limit int

	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p (or drops it past Limit); it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Limit > 0 && b.b.Len() > b.Limit {
		return len(p), nil
	}
	return b.b.Write(p)
}

// String returns what the buffer holds.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
