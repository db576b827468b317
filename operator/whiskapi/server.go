package whiskapi

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// OpenWhisk's messages, as its API answers them.
const (
	msgNotFound          = "The requested resource does not exist."
	msgExists            = "resource already exists"
	msgConflict          = "Concurrent modification to resource detected."
	msgNoAuth            = "The resource requires authentication, which was not supplied with the request"
	msgBadAuth           = "The supplied authentication is invalid"
	msgUnavailable       = "The server is currently unavailable (because it is overloaded or down for maintenance)."
	msgNoInvoker         = "Actions cannot be invoked: this is nuv's whisk-controller, which stores actions but has no invoker (it is not Apache OpenWhisk's controller)."
	msgTooLarge          = "The request content was malformed:\nrequest entity too large"
	maxBody        int64 = 48 << 20
)

// Server is the Whisk's API (an http.Handler).
type Server struct {
	cfg   Config
	log   *slog.Logger
	couch *couchClient // nil: no CouchDB
	redis *redisClient // nil: no Redis, no throttling
	mux   *http.ServeMux
	now   func() time.Time
}

// New makes the server of cfg; log receives one line per request (never a credential).
func New(cfg Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, mux: http.NewServeMux(), now: time.Now}
	if cfg.CouchDBURL != nil {
		s.couch = newCouchClient(cfg.CouchDBURL, cfg.Database)
	}
	if cfg.RedisAddr != "" {
		s.redis = newRedisClient(cfg.RedisAddr)
		s.redis.password = cfg.RedisPassword
	}
	s.mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		fmt.Fprint(w, "pong")
	})
	s.mux.HandleFunc("GET /ready", s.ready)
	s.mux.HandleFunc("GET /api/v1/namespaces", s.api(func(w http.ResponseWriter, r *http.Request, _ string) {
		writeJSON(w, http.StatusOK, []string{s.cfg.Namespace})
	}))
	s.mux.HandleFunc("/api/v1/namespaces", methodNotAllowed("GET"))
	s.mux.HandleFunc("GET /api/v1/namespaces/{ns}/actions", s.api(s.listActions))
	s.mux.HandleFunc("/api/v1/namespaces/{ns}/actions", methodNotAllowed("GET"))
	s.mux.HandleFunc("/api/v1/namespaces/{ns}/actions/{name...}", s.api(s.action))
	s.mux.HandleFunc("/api/v1/namespaces/{ns}/{collection}", s.api(s.unsupported))
	s.mux.HandleFunc("/api/v1/namespaces/{ns}/{collection}/{rest...}", s.api(s.unsupported))
	return s
}

// ServeHTTP serves one request, logging its method, path, status and duration.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	tid := transactionID()
	w.Header().Set("X-Request-ID", tid)
	rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	ctx := context.WithValue(r.Context(), tidKey{}, tid)
	if _, pattern := s.mux.Handler(r); pattern == "" {
		writeError(rw, r.WithContext(ctx), http.StatusNotFound, msgNotFound)
	} else {
		s.mux.ServeHTTP(rw, r.WithContext(ctx))
	}
	if r.URL.Path != "/ping" && r.URL.Path != "/ready" || rw.status != http.StatusOK {
		s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rw.status,
			"ms", time.Since(start).Milliseconds(), "tid", tid)
	}
}

type tidKey struct{}

type statusWriter struct {
	http.ResponseWriter
	status int
	once   sync.Once
}

func (w *statusWriter) WriteHeader(code int) {
	w.once.Do(func() { w.status = code })
	w.ResponseWriter.WriteHeader(code)
}

// methodNotAllowed answers 405 naming the methods a path supports.
func methodNotAllowed(methods string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", methods)
		writeError(w, r, http.StatusMethodNotAllowed, "HTTP method not allowed, supported methods: "+methods)
	}
}

// transactionID is a request's id, OpenWhisk's "code" in error bodies.
func transactionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ErrorBody is OpenWhisk's error response: the message and the request's transaction id.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func writeError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	tid, _ := r.Context().Value(tidKey{}).(string)
	writeJSON(w, code, ErrorBody{Error: msg, Code: tid})
}

// ready answers 200 when every configured dependency answers, else 503 naming the ones that do
// not.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	st := map[string]string{}
	ok := true
	check := func(name string, configured bool, fn func(context.Context) error) {
		if !configured {
			st[name] = "not configured"
			return
		}
		if err := fn(ctx); err != nil {
			ok = false
			st[name] = err.Error()
			return
		}
		st[name] = "ok"
	}
	check("couchdb", s.couch != nil, func(ctx context.Context) error { return s.couch.ping(ctx) })
	check("redis", s.redis != nil, func(ctx context.Context) error { return s.redis.ping(ctx) })
	code := http.StatusOK
	if !ok {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, st)
}

// api wraps an API handler: basic auth with the key, the namespace ({ns}, "_" for the key's),
// throttling, then h with the resolved namespace.
func (s *Server) api(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user, key, ok := r.BasicAuth()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="whisk rest service"`)
			writeError(w, r, http.StatusUnauthorized, msgNoAuth)
			return
		}
		userOK := subtle.ConstantTimeCompare([]byte(user), []byte(s.cfg.AuthUser))
		keyOK := subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.AuthKey))
		if userOK&keyOK != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="whisk rest service"`)
			writeError(w, r, http.StatusUnauthorized, msgBadAuth)
			return
		}
		ns := r.PathValue("ns")
		switch {
		case ns == "" || ns == "_":
			ns = s.cfg.Namespace
		case !validName(ns):
			writeError(w, r, http.StatusBadRequest, "The namespace contains illegal characters.")
			return
		case ns != s.cfg.Namespace:
			writeError(w, r, http.StatusForbidden, fmt.Sprintf("The supplied authentication is not authorized to access '%s'.", ns))
			return
		}
		if s.redis != nil {
			count, err := s.redis.incrWindow(r.Context(), s.throttleKey(ns), 2*time.Minute)
			if err != nil {
				s.log.Error("throttle", "namespace", ns, "err", err)
				writeError(w, r, http.StatusServiceUnavailable, msgUnavailable)
				return
			}
			if count > int64(s.cfg.RequestsPerMinute) {
				writeError(w, r, http.StatusTooManyRequests,
					fmt.Sprintf("Too many requests in the last minute (count: %d, allowed: %d).", count, s.cfg.RequestsPerMinute))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r, ns)
	}
}

// throttleKey is the Redis key counting ns's requests in the current minute.
func (s *Server) throttleKey(ns string) string {
	return fmt.Sprintf("nuv-whisk:throttle:%s:%d", ns, s.now().Unix()/60)
}

func (s *Server) unsupported(w http.ResponseWriter, r *http.Request, _ string) {
	switch c := r.PathValue("collection"); c {
	case "packages", "triggers", "rules", "activations":
		writeError(w, r, http.StatusNotImplemented, fmt.Sprintf("nuv's whisk-controller does not implement %s (it serves actions only).", c))
	default:
		writeError(w, r, http.StatusNotFound, msgNotFound)
	}
}

// store is the entity store, or an error answer when CouchDB is not configured.
func (s *Server) store(w http.ResponseWriter, r *http.Request) *couchClient {
	if s.couch == nil {
		writeError(w, r, http.StatusServiceUnavailable, msgUnavailable+" No CouchDB is configured ("+EnvCouchDBURL+").")
	}
	return s.couch
}

// storeError answers a CouchDB failure.
func (s *Server) storeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errNotFound):
		writeError(w, r, http.StatusNotFound, msgNotFound)
	case errors.Is(err, errConflict):
		writeError(w, r, http.StatusConflict, msgConflict)
	default:
		s.log.Error("couchdb", "path", r.URL.Path, "err", err)
		writeError(w, r, http.StatusServiceUnavailable, msgUnavailable)
	}
}

func (s *Server) listActions(w http.ResponseWriter, r *http.Request, ns string) {
	q := r.URL.Query()
	limit, skip := 30, 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			writeError(w, r, http.StatusBadRequest, fmt.Sprintf("The value '%s' is not an integer for actions.", v))
			return
		case n < 0 || n > 200:
			writeError(w, r, http.StatusBadRequest, fmt.Sprintf("The value '%d' is not in the range of 0 to 200 for actions.", n))
			return
		case n == 0:
			limit = 200
		default:
			limit = n
		}
	}
	if v := q.Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			writeError(w, r, http.StatusBadRequest, fmt.Sprintf("The value '%s' is not an integer for actions.", v))
			return
		case n < 0:
			writeError(w, r, http.StatusBadRequest, fmt.Sprintf("The value '%d' is not greater than or equal to 0 for actions.", n))
			return
		}
		skip = n
	}
	db := s.store(w, r)
	if db == nil {
		return
	}
	docs, err := db.rangeDocs(r.Context(), ns+"/", skip, limit)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	out := []Action{}
	for _, raw := range docs {
		var d actionDoc
		if json.Unmarshal(raw, &d) != nil || d.EntityType != "action" {
			continue
		}
		d.Action.Exec = Exec{Kind: d.Exec.Kind, Binary: d.Exec.Binary} // a list carries no code
		out = append(out, d.Action)
	}
	writeJSON(w, http.StatusOK, out)
}

// action serves GET, PUT, DELETE and POST (invoke) on one action.
func (s *Server) action(w http.ResponseWriter, r *http.Request, ns string) {
	name := r.PathValue("name")
	if strings.Contains(name, "/") {
		writeError(w, r, http.StatusNotImplemented, "nuv's whisk-controller does not implement packages: action names have no package part.")
		return
	}
	if !validName(name) {
		writeError(w, r, http.StatusBadRequest, "The name of the entity contains illegal characters.")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodPut, http.MethodDelete:
	case http.MethodPost:
		writeError(w, r, http.StatusNotImplemented, msgNoInvoker)
		return
	default:
		methodNotAllowed("GET, PUT, DELETE, POST")(w, r)
		return
	}
	db := s.store(w, r)
	if db == nil {
		return
	}
	id := docID(ns, name)
	switch r.Method {
	case http.MethodGet:
		var d actionDoc
		if _, err := db.get(r.Context(), id, &d); err != nil {
			s.storeError(w, r, err)
			return
		}
		if d.EntityType != "action" {
			writeError(w, r, http.StatusConflict, "Resource by this name exists but is not in this collection.")
			return
		}
		if r.URL.Query().Get("code") == "false" {
			d.Exec.Code = ""
		}
		writeJSON(w, http.StatusOK, d.Action)
	case http.MethodDelete:
		var d actionDoc
		rev, err := db.get(r.Context(), id, &d)
		if err != nil {
			s.storeError(w, r, err)
			return
		}
		if err := db.del(r.Context(), id, rev); err != nil {
			s.storeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, d.Action)
	case http.MethodPut:
		s.putAction(w, r, db, ns, name)
	}
}

// putAction creates the action, or with ?overwrite=true updates it with the revision it read.
func (s *Server) putAction(w http.ResponseWriter, r *http.Request, db *couchClient, ns, name string) {
	var body actionPut
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, r, http.StatusRequestEntityTooLarge, msgTooLarge)
			return
		}
		writeError(w, r, http.StatusBadRequest, "The request content was malformed:\n"+err.Error())
		return
	}
	overwrite := r.URL.Query().Get("overwrite") == "true"
	id := docID(ns, name)
	var cur actionDoc
	rev, err := db.get(r.Context(), id, &cur)
	switch {
	case errors.Is(err, errNotFound):
		cur = actionDoc{}
	case err != nil:
		s.storeError(w, r, err)
		return
	case !overwrite:
		writeError(w, r, http.StatusConflict, msgExists)
		return
	case cur.EntityType != "action":
		writeError(w, r, http.StatusConflict, "Resource by this name exists but is not in this collection.")
		return
	}
	a := cur.Action
	if err := body.apply(&a); err != nil {
		writeError(w, r, http.StatusBadRequest, "The request content was malformed:\n"+err.Error())
		return
	}
	a.Namespace, a.Name, a.Updated = ns, name, s.now().UnixMilli()
	if _, err := db.put(r.Context(), id, rev, actionDoc{ID: id, Rev: rev, EntityType: "action", Action: a}); err != nil {
		if errors.Is(err, errConflict) && rev == "" {
			// created by someone else since it was read
			if !overwrite {
				writeError(w, r, http.StatusConflict, msgExists)
				return
			}
		}
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}
