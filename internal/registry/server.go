// Package registry is the OCI registry nuv runs on loopback for its local clusters: `nuv registry
// up|down|status`. It serves go-containerregistry's registry handler with blobs on disk and a
// journal of manifest writes, both under <NUV_HOME>/registry, so images survive a restart. It runs
// as a detached process (`nuv registry serve`) recorded in a state file.
package registry

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
)

// entry is one manifest write or delete in the journal; the manifest body is stored as a blob.
type entry struct {
	Op          string `json:"op"` // "put" or "delete"
	Path        string `json:"path"`
	ContentType string `json:"contentType,omitempty"`
	Digest      string `json:"digest,omitempty"`
}

// Handler is the persistent registry: a go-containerregistry handler whose blobs live in
// <dir>/blobs and whose manifest writes are journaled in <dir>/manifests.jsonl and replayed at start.
type Handler struct {
	dir   string
	inner http.Handler
	mu    sync.Mutex
}

// NewHandler opens (creating) the registry storage in dir and replays the journal.
func NewHandler(dir string, logw io.Writer) (*Handler, error) {
	blobs := filepath.Join(dir, "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, fmt.Errorf("registry storage %s: %w", dir, err)
	}
	if logw == nil {
		logw = io.Discard
	}
	h := &Handler{dir: dir, inner: ggcr.New(
		ggcr.WithBlobHandler(ggcr.NewDiskBlobHandler(blobs)),
		ggcr.Logger(log.New(logw, "", log.LstdFlags)),
	)}
	if err := h.replay(); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *Handler) journal() string { return filepath.Join(h.dir, "manifests.jsonl") }

func (h *Handler) replay() error {
	f, err := os.Open(h.journal())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("registry journal: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a torn last line after a crash
		}
		var req *http.Request
		switch e.Op {
		case "put":
			body, err := os.ReadFile(h.manifestFile(e.Digest))
			if err != nil {
				continue
			}
			req = httptest.NewRequest(http.MethodPut, e.Path, bytes.NewReader(body))
			req.Header.Set("Content-Type", e.ContentType)
		case "delete":
			req = httptest.NewRequest(http.MethodDelete, e.Path, nil)
		default:
			continue
		}
		h.inner.ServeHTTP(httptest.NewRecorder(), req)
	}
	return sc.Err()
}

func (h *Handler) manifestFile(digest string) string {
	return filepath.Join(h.dir, "manifests", strings.ReplaceAll(digest, ":", "-"))
}

// ServeHTTP serves the registry and journals successful manifest writes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isManifest(r.URL.Path) || (r.Method != http.MethodPut && r.Method != http.MethodDelete) {
		h.inner.ServeHTTP(w, r)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var body []byte
	if r.Method == http.MethodPut {
		b, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	rec := &statusRecorder{ResponseWriter: w}
	h.inner.ServeHTTP(rec, r)
	if rec.status/100 != 2 {
		return
	}
	e := entry{Op: "delete", Path: r.URL.Path}
	if r.Method == http.MethodPut {
		sum := sha256.Sum256(body)
		e = entry{Op: "put", Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Digest: "sha256:" + hex.EncodeToString(sum[:])}
		if err := os.MkdirAll(filepath.Dir(h.manifestFile(e.Digest)), 0o755); err == nil {
			_ = os.WriteFile(h.manifestFile(e.Digest), body, 0o644)
		}
	}
	line, _ := json.Marshal(e)
	if f, err := os.OpenFile(h.journal(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
		f.Write(append(line, '\n'))
		f.Sync()
		f.Close()
	}
}

func isManifest(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return len(parts) >= 4 && parts[0] == "v2" && parts[len(parts)-2] == "manifests"
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Serve runs the registry on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
