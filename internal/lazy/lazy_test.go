package lazy

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Each method gives what regexp.Regexp gives for the same expression and input.
func TestRegexpMethodsMatchRegexp(t *testing.T) {
	tests := []struct {
		expr, in string
	}{
		{`^([a-z]+)-(\d+)$`, "zone-12"},
		{`^([a-z]+)-(\d+)$`, "Zone-12"},
		{`(\w+)=(\w*)`, "a=1 b= c=three"},
		{`x*`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.expr+"/"+tt.in, func(t *testing.T) {
			l, re := MustCompile(tt.expr), regexp.MustCompile(tt.expr)
			if l.String() != tt.expr {
				t.Errorf("String() = %q, want %q", l.String(), tt.expr)
			}
			if got, want := l.MatchString(tt.in), re.MatchString(tt.in); got != want {
				t.Errorf("MatchString = %v, want %v", got, want)
			}
			if got, want := l.FindString(tt.in), re.FindString(tt.in); got != want {
				t.Errorf("FindString = %q, want %q", got, want)
			}
			if got, want := l.FindStringSubmatch(tt.in), re.FindStringSubmatch(tt.in); !slices.Equal(got, want) {
				t.Errorf("FindStringSubmatch = %q, want %q", got, want)
			}
			if got, want := l.FindSubmatch([]byte(tt.in)), re.FindSubmatch([]byte(tt.in)); !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("FindSubmatch = %q, want %q", got, want)
			}
			got, want := l.FindAllStringSubmatch(tt.in, -1), re.FindAllStringSubmatch(tt.in, -1)
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("FindAllStringSubmatch = %q, want %q", got, want)
			}
			if got, want := l.ReplaceAllString(tt.in, "<$1>"), re.ReplaceAllString(tt.in, "<$1>"); got != want {
				t.Errorf("ReplaceAllString = %q, want %q", got, want)
			}
			if got, want := l.ReplaceAllStringFunc(tt.in, strings.ToUpper), re.ReplaceAllStringFunc(tt.in, strings.ToUpper); got != want {
				t.Errorf("ReplaceAllStringFunc = %q, want %q", got, want)
			}
			if got, want := l.ReplaceAllFunc([]byte(tt.in), bytes.ToUpper), re.ReplaceAllFunc([]byte(tt.in), bytes.ToUpper); !bytes.Equal(got, want) {
				t.Errorf("ReplaceAllFunc = %q, want %q", got, want)
			}
			if l.Get() != l.Get() {
				t.Error("Get compiled the expression twice")
			}
		})
	}
}

// MustCompile does not compile: a bad expression panics on first use, not when it is declared.
func TestRegexpCompilesOnFirstUse(t *testing.T) {
	bad := MustCompile(`(unclosed`)
	if bad.re != nil {
		t.Fatal("MustCompile compiled the expression")
	}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "(unclosed") {
			t.Fatalf("first use of an invalid expression: recovered %v, want a panic naming it", r)
		}
	}()
	bad.MatchString("x")
}

// New runs exactly once however many goroutines call Get at the same time, and all of them see its value.
func TestValueComputedOnce(t *testing.T) {
	var calls atomic.Int32
	v := Value[map[string]int]{New: func() map[string]int {
		calls.Add(1)
		return map[string]int{"a": 1}
	}}
	if calls.Load() != 0 {
		t.Fatal("New ran before Get")
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if got := v.Get()["a"]; got != 1 {
				t.Errorf(`Get()["a"] = %d, want 1`, got)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("New ran %d times, want 1", n)
	}
}

// Concurrent first uses of one Regexp compile it once and all match.
func TestRegexpConcurrentFirstUse(t *testing.T) {
	re := MustCompile(`^a+$`)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if !re.MatchString("aaa") {
				t.Error(`MatchString("aaa") = false`)
			}
		})
	}
	wg.Wait()
}
