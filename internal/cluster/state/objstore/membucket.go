package objstore

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Memory is a Bucket in memory, for tests of what is written against Buckets (the Store's
// logic); it meets the Bucket contract exactly (objstoretest.Run passes on it). Versions count up.
type Memory struct {
	Name string // for Where: "mem://NAME"

	mu      sync.Mutex
	objects map[string]memObject
	next    int64
	// FailPut, if set, is returned by every Put whose key it is asked about (true): a store error.
	FailPut func(key string) bool
}

type memObject struct {
	data    []byte
	version string
}

var _ Bucket = (*Memory)(nil)

// Where is mem://NAME.
func (m *Memory) Where() string { return "mem://" + m.Name }

// Check always succeeds.
func (m *Memory) Check(context.Context) error { return nil }

// Get returns a copy of an object.
func (m *Memory) Get(_ context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	if !ok {
		return nil, "", fmt.Errorf("%s/%s: %w", m.Where(), key, ErrNotFound)
	}
	return append([]byte(nil), o.data...), o.version, nil
}

// Put writes an object if c holds.
func (m *Memory) Put(_ context.Context, key string, data []byte, c Cond) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.FailPut != nil && m.FailPut(key) {
		return "", fmt.Errorf("put %s/%s: the store failed (test)", m.Where(), key)
	}
	o, ok := m.objects[key]
	switch {
	case c.Absent && ok:
		return "", fmt.Errorf("put %s/%s: %w (it exists)", m.Where(), key, ErrPrecondition)
	case c.Version != "" && (!ok || o.version != c.Version):
		return "", fmt.Errorf("put %s/%s: %w (not at version %s)", m.Where(), key, ErrPrecondition, c.Version)
	}
	if m.objects == nil {
		m.objects = map[string]memObject{}
	}
	m.next++
	v := strconv.FormatInt(m.next, 10)
	m.objects[key] = memObject{append([]byte(nil), data...), v}
	return v, nil
}

// Delete removes an object if it is at version ("" any).
func (m *Memory) Delete(_ context.Context, key, version string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	switch {
	case !ok:
		return fmt.Errorf("delete %s/%s: %w", m.Where(), key, ErrNotFound)
	case version != "" && o.version != version:
		return fmt.Errorf("delete %s/%s: %w (not at version %s)", m.Where(), key, ErrPrecondition, version)
	}
	delete(m.objects, key)
	return nil
}

// List returns the keys under prefix, sorted.
func (m *Memory) List(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}
