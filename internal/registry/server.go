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
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/fsutil"
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
	log   *log.Logger
	mu    sync.Mutex
	token string // the push token: writes need it (see auth.go)
}

// MaxManifest is the largest manifest the registry takes; a larger one is answered 413.
const MaxManifest = 8 << 20

// NewHandler opens (creating) the registry storage in dir and replays the journal.
func NewHandler(dir string, logw io.Writer) (*Handler, error) {
	blobs := filepath.Join(dir, "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, fmt.Errorf("registry storage %s: %w", dir, err)
	}
	if logw == nil {
		logw = io.Discard
	}
	logger := log.New(logw, "", log.LstdFlags)
	tok, err := EnsurePushToken(dir)
	if err != nil {
		return nil, err
	}
	h := &Handler{dir: dir, log: logger, token: tok, inner: ggcr.New(
		ggcr.WithBlobHandler(newDurableBlobs(blobs)),
		ggcr.Logger(logger),
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

// ServeHTTP serves the registry. A manifest write or delete is acknowledged only once it is durable:
// the inner handler answers into a buffer, the manifest body is written atomically and the journal
// entry appended and synced, and only then is the buffered answer sent. When the write cannot be
// made durable the client gets 500 and the in-memory registry is put back as it was, so what it
// serves matches what a restart would replay.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if writeMethod(r.Method) && !authorized(r, h.token) {
		unauthorized(w)
		return
	}
	if !isManifest(r.URL.Path) || (r.Method != http.MethodPut && r.Method != http.MethodDelete) {
		h.inner.ServeHTTP(w, r)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var body []byte
	if r.Method == http.MethodPut {
		if r.ContentLength > MaxManifest {
			writeRegistryError(w, http.StatusRequestEntityTooLarge, "SIZE_INVALID", fmt.Sprintf("manifest of %d bytes is larger than the registry's limit of %d bytes", r.ContentLength, MaxManifest))
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, MaxManifest+1))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(b) > MaxManifest {
			writeRegistryError(w, http.StatusRequestEntityTooLarge, "SIZE_INVALID", fmt.Sprintf("manifest larger than the registry's limit of %d bytes", MaxManifest))
			return
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	prev := h.current(r.URL.Path)
	rec := httptest.NewRecorder()
	h.inner.ServeHTTP(rec, r)
	if rec.Code/100 == 2 {
		if err := h.record(r, body); err != nil {
			h.restore(r.URL.Path, prev)
			h.logf("manifest %s %s not stored: %v", r.Method, r.URL.Path, err)
			http.Error(w, "registry storage: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// record makes one successful manifest write durable: the body (for a put) as a blob written
// atomically, then the journal entry appended in one write and synced.
func (h *Handler) record(r *http.Request, body []byte) error {
	e := entry{Op: "delete", Path: r.URL.Path}
	if r.Method == http.MethodPut {
		sum := sha256.Sum256(body)
		e = entry{Op: "put", Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Digest: "sha256:" + hex.EncodeToString(sum[:])}
		file := h.manifestFile(e.Digest)
		if err := fsutil.WriteFileAtomic(file, body, 0o644); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(file)); err != nil {
			return err
		}
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(h.journal(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", h.journal(), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", h.journal(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("journal %s: %w", h.journal(), err)
	}
	return syncDir(h.dir)
}

// manifestState is what the in-memory registry served at a manifest path before a write.
type manifestState struct {
	found       bool
	body        []byte
	contentType string
}

func (h *Handler) current(path string) manifestState {
	rec := httptest.NewRecorder()
	h.inner.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		return manifestState{}
	}
	return manifestState{found: true, body: rec.Body.Bytes(), contentType: rec.Header().Get("Content-Type")}
}

// restore puts a manifest path of the in-memory registry back to prev after a write that could not
// be made durable.
func (h *Handler) restore(path string, prev manifestState) {
	req := httptest.NewRequest(http.MethodDelete, path, nil)
	if prev.found {
		req = httptest.NewRequest(http.MethodPut, path, bytes.NewReader(prev.body))
		req.Header.Set("Content-Type", prev.contentType)
	}
	h.inner.ServeHTTP(httptest.NewRecorder(), req)
}

func (h *Handler) logf(format string, args ...any) {
	if h.log != nil {
		h.log.Printf(format, args...)
	}
}

// syncDir flushes a directory's entries (a rename or a new file in it) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// durableBlobs stores blobs like go-containerregistry's disk handler (<dir>/<algorithm>/<hex>, so
// existing storage stays readable) but syncs each blob and its directory before the upload is
// acknowledged.
type durableBlobs struct {
	dir  string
	disk ggcr.BlobHandler
}

func newDurableBlobs(dir string) *durableBlobs {
	return &durableBlobs{dir: dir, disk: ggcr.NewDiskBlobHandler(dir)}
}

func (b *durableBlobs) Get(ctx context.Context, repo string, h v1.Hash) (io.ReadCloser, error) {
	return b.disk.Get(ctx, repo, h)
}

func (b *durableBlobs) Stat(ctx context.Context, repo string, h v1.Hash) (int64, error) {
	return b.disk.(ggcr.BlobStatHandler).Stat(ctx, repo, h)
}

func (b *durableBlobs) Delete(ctx context.Context, repo string, h v1.Hash) error {
	return b.disk.(ggcr.BlobDeleteHandler).Delete(ctx, repo, h)
}

// Put writes the blob to a temporary file (the reader checks size and digest as it is read), syncs
// it, renames it into place and syncs the directory.
func (b *durableBlobs) Put(_ context.Context, _ string, h v1.Hash, rc io.ReadCloser) error {
	dir := filepath.Join(b.dir, h.Algorithm)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	f, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	tmp := f.Name()
	_, err = io.Copy(f, rc)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, h.Hex))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("blob %s: %w", h, err)
	}
	return syncDir(dir)
}

func isManifest(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return len(parts) >= 4 && parts[0] == "v2" && parts[len(parts)-2] == "manifests"
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
