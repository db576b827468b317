// Package lazy holds package-level values that nuv builds on first use instead of at program start:
// compiled regular expressions and tables or templates computed by code. A package-level variable of
// these types is laid out by the compiler in the binary's data (its initialiser is a constant or a
// composite literal), so no code runs for it when the program starts and a command pays only for the
// values it touches. nuv -version, nuv kube and the daily verbs start in a few milliseconds because no
// package nuv owns compiles, parses or decodes anything at init (issue 24; internal/inittrace checks it).
//
// Use:
//
//	var nameRE = lazy.MustCompile(`^[a-z]+$`)          // compiled by the first nameRE.MatchString
//	var table = lazy.Value[map[string]int]{New: build} // built by the first table.Get()
//
// Both are safe for concurrent use. A pattern that does not compile panics on first use, as
// regexp.MustCompile would have at start; each package's tests exercise its patterns.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use. Its methods are those of regexp.Regexp that
// nuv calls; Get returns the compiled expression for anything else.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// MustCompile returns a Regexp for expr without compiling it. It is meant for package-level
// variables: the compiler initialises `var x = lazy.MustCompile("...")` statically.
func MustCompile(expr string) *Regexp { return &Regexp{expr: expr} }

// Get compiles the expression the first time and returns it; it panics if the expression is invalid.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String returns the source text of the expression (without compiling it).
func (r *Regexp) String() string { return r.expr }

// MatchString reports whether s contains a match; see regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Get().MatchString(s) }

// FindString returns the leftmost match in s; see regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.Get().FindString(s) }

// FindStringSubmatch returns the leftmost match in s and its submatches; see
// regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Get().FindStringSubmatch(s) }

// FindSubmatch returns the leftmost match in b and its submatches; see regexp.Regexp.FindSubmatch.
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Get().FindSubmatch(b) }

// FindAllStringSubmatch returns up to n successive matches with their submatches; see
// regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Get().FindAllStringSubmatch(s, n)
}

// ReplaceAllString replaces the matches in src with repl, expanding $ references; see
// regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Get().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc replaces the matches in src with repl's result; see
// regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Get().ReplaceAllStringFunc(src, repl)
}

// ReplaceAllFunc replaces the matches in src with repl's result; see regexp.Regexp.ReplaceAllFunc.
func (r *Regexp) ReplaceAllFunc(src []byte, repl func([]byte) []byte) []byte {
	return r.Get().ReplaceAllFunc(src, repl)
}

// Value is a value computed by New on the first Get. Declare it as a composite literal,
// `var v = lazy.Value[T]{New: f}`, so the compiler lays it out statically; do not copy it after use.
type Value[T any] struct {
	// New computes the value; it runs once, on the first Get.
	New  func() T
	once sync.Once
	v    T
}

// Get returns the value, computing it the first time.
func (v *Value[T]) Get() T {
	v.once.Do(func() { v.v = v.New() })
	return v.v
}
