package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		writes  int
		wantLen int
	}{
		{"keeps everything", 0, 100, 100 * len("line\n")},
		{"stops past the limit", 12, 100, 15}, // writes go on until more than 12 bytes are held
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Buffer{Limit: tt.limit}
			var wg sync.WaitGroup
			for range tt.writes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if n, err := b.Write([]byte("line\n")); n != 5 || err != nil {
						t.Errorf("Write: %d, %v", n, err)
					}
					_ = b.String() // reads race with writes
				}()
			}
			wg.Wait()
			got := b.String()
			if len(got) != tt.wantLen || strings.Count(got, "line\n")*5 != len(got) {
				t.Fatalf("buffer holds %d bytes %q, want %d whole lines", len(got), got, tt.wantLen)
			}
		})
	}
}
