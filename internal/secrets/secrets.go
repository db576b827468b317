// Package secrets hides the values of secret-looking variables wherever nuv prints text: dry-run
// command echoes, -info listings and error messages. A key is secret when its upper-cased name
// contains TOKEN, PASSWORD, SECRET or KEY, or when it is listed explicitly (config `secrets`).
package secrets

import (
	"encoding/base64"
	"io"
	"slices"
	"strings"
	"sync"
)

// Placeholder replaces every secret value in masked text.
const Placeholder = "***"

// minLen is the shortest value that is masked: masking "1" or "y" would garble unrelated output
// while hiding nothing worth hiding.
const minLen = 3

var markers = []string{"TOKEN", "PASSWORD", "PASSWD", "SECRET", "KEY", "AUTH", "CREDENTIAL", "DSN", "PRIVATE"}

// IsSecretKey reports whether the variable name looks secret or is one of extra (case-insensitive).
func IsSecretKey(key string, extra ...string) bool {
	up := strings.ToUpper(key)
	for _, m := range markers {
		if strings.Contains(up, m) {
			return true
		}
	}
	for _, x := range extra {
		if strings.EqualFold(strings.TrimSpace(x), key) {
			return true
		}
	}
	return false
}

// Masker replaces the values of secret variables with Placeholder. The zero value masks nothing.
// A Masker is safe for concurrent use once built.
type Masker struct {
	values []string // longest first, so a value containing another is replaced whole
}

// NewMasker collects the secret values of env (KEY=VALUE entries); extra names more secret keys.
func NewMasker(env []string, extra ...string) *Masker {
	m := &Masker{}
	m.Add(env, extra...)
	return m
}

// Add collects more secret values from env (KEY=VALUE entries). It is not safe to call while
// another goroutine masks with m.
func (m *Masker) Add(env []string, extra ...string) {
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < minLen || !IsSecretKey(k, extra...) {
			continue
		}
		m.add(v)
	}
	slices.SortFunc(m.values, func(a, b string) int { return len(b) - len(a) })
}

// add records v and its base64 forms (unsorted).
func (m *Masker) add(v string) {
	for _, x := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v))} {
		if !slices.Contains(m.values, x) {
			m.values = append(m.values, x)
		}
	}
}

// AddValue masks value itself (for secrets that do not come from a variable).
func (m *Masker) AddValue(value string) {
	if len(value) >= minLen {
		m.add(value)
		slices.SortFunc(m.values, func(a, b string) int { return len(b) - len(a) })
	}
}

// Empty reports whether m has nothing to mask.
func (m *Masker) Empty() bool { return m == nil || len(m.values) == 0 }

// Mask returns text with every secret value replaced by Placeholder.
func (m *Masker) Mask(text string) string {
	if m.Empty() {
		return text
	}
	for _, v := range m.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Placeholder)
		}
	}
	return text
}

// Mask is NewMasker(env, extra...).Mask(text).
func Mask(text string, env []string, extra ...string) string {
	return NewMasker(env, extra...).Mask(text)
}

// Error wraps err so that its message is masked; errors.Is/As still see the original.
func (m *Masker) Error(err error) error {
	if err == nil || m.Empty() {
		return err
	}
	return &maskedError{err: err, m: m}
}

type maskedError struct {
	err error
	m   *Masker
}

func (e *maskedError) Error() string { return e.m.Mask(e.err.Error()) }
func (e *maskedError) Unwrap() error { return e.err }

// Writer returns a writer that masks each Write before passing it to w. nuv's own messages are
// written one line per call, so a secret is never split between two writes of nuv's own output.
func (m *Masker) Writer(w io.Writer) io.Writer {
	if m.Empty() {
		return w
	}
	return &maskWriter{w: w, m: m}
}

type maskWriter struct {
	mu sync.Mutex
	w  io.Writer
	m  *Masker
}

func (mw *maskWriter) Write(p []byte) (int, error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if _, err := io.WriteString(mw.w, mw.m.Mask(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// RedactObject replaces the values of a Kubernetes Secret's data and stringData with Placeholder,
// keeping the keys, and drops its last-applied-configuration annotation (which repeats them). obj
// is an object as decoded from JSON or YAML (unstructured.Unstructured.Object); anything that is
// not a Secret is left alone. It reports whether it changed obj.
func RedactObject(obj map[string]any) bool {
	if obj == nil || obj["kind"] != "Secret" {
		return false
	}
	changed := false
	for _, field := range []string{"data", "stringData"} {
		if data, ok := obj[field].(map[string]any); ok {
			for k := range data {
				data[k] = Placeholder
				changed = true
			}
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if _, ok := ann[lastApplied]; ok {
				delete(ann, lastApplied)
				changed = true
			}
		}
	}
	return changed
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
