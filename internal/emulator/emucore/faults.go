package emucore

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
)

// FaultLimits are how often a fault fires; every emulator's fault embeds them, so in JSON they are
// the fault's own fields (every, count, fired).
type FaultLimits struct {
	// Every makes the fault hit the Nth, 2Nth, ... call of its operation only (0 or 1: every call).
	Every int `json:"every,omitempty"`
	// Count is how many times the fault fires before it is spent (0: no limit).
	Count int `json:"count,omitempty"`
	// Fired counts the times it fired.
	Fired int `json:"fired"`
}

// Limits are the fault's every, count and fired count (Limited).
func (l *FaultLimits) Limits() (every, count int, fired *int) { return l.Every, l.Count, &l.Fired }

// Check refuses negative limits of the fault of operation op.
func (l FaultLimits) Check(op string) error {
	if l.Every < 0 || l.Count < 0 {
		return fmt.Errorf("fault %s: every and count cannot be negative", op)
	}
	return nil
}

// Fires reports whether a fault limited to every Nth call (every <= 1: each call) and to count
// firings (0: no limit), which fired `fired` times, hits call number n of its operation.
func Fires(every, count, fired, n int) bool {
	if count > 0 && fired >= count {
		return false
	}
	return every <= 1 || n%every == 0
}

// NamesSegment reports whether res is one of the /-separated segments of name (equal is how two
// segments compare: == or strings.EqualFold).
func NamesSegment(name, res string, equal func(a, b string) bool) bool {
	for _, seg := range strings.Split(name, "/") {
		if equal(seg, res) {
			return true
		}
	}
	return false
}

// ReadFaultsFile reads a faults file with decode; a missing file is no faults.
func ReadFaultsFile[F any](path string, decode func([]byte) ([]*F, error)) ([]*F, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fs, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fs, nil
}

// FaultsEndpoint serves an emulator's /_nuv/faults over the faults *list guarded by mu: GET lists
// them (with their counts), POST adds, PUT replaces, DELETE clears; each answers the list after.
type FaultsEndpoint[F any] struct {
	// Name starts error answers: "nuv emulator", "nuv GKE emulator".
	Name   string
	Mu     *sync.Mutex
	List   *[]*F
	Decode func([]byte) ([]*F, error)
	// WriteJSON writes the emulator's JSON answers.
	WriteJSON func(w http.ResponseWriter, status int, v any)
	// AdminToken is the emulator's admin token, which every request must carry (AdminAllowed).
	AdminToken string
}

// Snapshot copies the faults under the lock.
func (e FaultsEndpoint[F]) Snapshot() []F {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	out := make([]F, len(*e.List))
	for i, f := range *e.List {
		out[i] = *f
	}
	return out
}

// ServeHTTP serves /_nuv/faults.
func (e FaultsEndpoint[F]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !AdminAllowed(w, r, e.Name, e.AdminToken) {
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost, http.MethodPut:
		b, err := ReadBody(r, 1<<20)
		var tooLarge *BodyTooLargeError
		if errors.As(err, &tooLarge) {
			http.Error(w, e.Name+": faults: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fs, err := e.Decode(b)
		if err != nil {
			http.Error(w, e.Name+": faults: "+err.Error(), http.StatusBadRequest)
			return
		}
		e.Mu.Lock()
		if r.Method == http.MethodPut {
			*e.List = nil
		}
		*e.List = append(*e.List, fs...)
		e.Mu.Unlock()
	case http.MethodDelete:
		e.Mu.Lock()
		*e.List = nil
		e.Mu.Unlock()
	default:
		http.Error(w, e.Name+": /_nuv/faults takes GET, POST, PUT or DELETE", http.StatusMethodNotAllowed)
		return
	}
	e.WriteJSON(w, http.StatusOK, e.Snapshot())
}

// DecodeFaults reads one fault object or a JSON list of them and checks each with validate.
// strict refuses fields F does not have.
func DecodeFaults[F any](b []byte, strict bool, validate func(*F) error) ([]*F, error) {
	var fs []*F
	t := strings.TrimSpace(string(b))
	decode := func(v any) error {
		if !strict {
			return json.Unmarshal(b, v)
		}
		dec := json.NewDecoder(strings.NewReader(t))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	if strings.HasPrefix(t, "{") {
		var f F
		if err := decode(&f); err != nil {
			return nil, err
		}
		fs = []*F{&f}
	} else if err := decode(&fs); err != nil {
		return nil, err
	}
	for _, f := range fs {
		if err := validate(f); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// Limited is an injected fault with its limits: every Nth call, at most count firings, and the
// number of times it fired (which Hit increments).
type Limited interface {
	Limits() (every, count int, fired *int)
}

// Hit returns the first of fs that applies to call number n of an operation (applies says whether
// a fault names the operation and the resource) and Fires by its limits, counting the firing;
// nil (the zero F) when none does. A fault that is not Limited never fires.
func Hit[F any](fs []F, n int, applies func(F) bool) F {
	for _, f := range fs {
		l, ok := any(f).(Limited)
		if !ok || !applies(f) {
			continue
		}
		every, count, fired := l.Limits()
		if !Fires(every, count, *fired, n) {
			continue
		}
		*fired++
		return f
	}
	var none F
	return none
}

// FaultError is what an injected "error" fault answers: the service's error code, its message and
// the HTTP status (each defaults to the service's internal error, 500). An emulator's fault
// embeds it, so in JSON they are the fault's own fields (code, message, status).
type FaultError struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Status  int    `json:"status,omitempty"`
}

// CheckStatus refuses a status of the fault of operation op that is not an HTTP error status.
func (e FaultError) CheckStatus(op string) error {
	if e.Status != 0 && (e.Status < 400 || e.Status > 599) {
		return fmt.Errorf("fault %s: status %d is not an HTTP error status (400-599)", op, e.Status)
	}
	return nil
}
