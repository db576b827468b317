package taskrun

import (
	"io"
	"os"
	"sync"
)

// syncStreams makes in-memory streams safe for go-task's parallel commands (deps, -p), which
// write to and read from them concurrently. Files are passed through untouched: child processes
// then inherit the descriptors (and see a terminal when there is one). Out and Err sharing one
// writer share one lock.
func syncStreams(in io.Reader, out, errw io.Writer) (io.Reader, io.Writer, io.Writer) {
	if in != nil {
		if _, ok := in.(*os.File); !ok {
			in = &syncReader{r: in}
		}
	}
	var outMu *sync.Mutex
	if out != nil {
		if _, ok := out.(*os.File); !ok {
			outMu = &sync.Mutex{}
			out = &syncWriter{w: out, mu: outMu}
		}
	}
	if errw != nil {
		if _, ok := errw.(*os.File); !ok {
			mu := &sync.Mutex{}
			if sw, ok := out.(*syncWriter); ok && sw.w == errw {
				mu = outMu
			}
			errw = &syncWriter{w: errw, mu: mu}
		}
	}
	return in, out, errw
}

type syncWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

type syncReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (s *syncReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Read(p)
}
