package itest

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
)

// Match reports whether actual contains expected: every map key given in expected is present in
// actual with a matching value; a list matches when each expected element matches at least one
// actual element (order ignored); numbers compare by value whatever their Go type. The error
// names the first mismatching path.
func Match(expected, actual any) error { return match(expected, actual, "") }

func match(exp, act any, path string) error {
	switch e := exp.(type) {
	case map[string]any:
		a, ok := act.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: expected an object, got %s", show(path), describe(act))
		}
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, ok := a[k]
			if !ok {
				return fmt.Errorf("%s.%s: missing (expected %s)", path, k, describe(e[k]))
			}
			if err := match(e[k], av, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		a, ok := act.([]any)
		if !ok {
			return fmt.Errorf("%s: expected a list, got %s", show(path), describe(act))
		}
		for i, ev := range e {
			var first error
			found := false
			for _, av := range a {
				err := match(ev, av, fmt.Sprintf("%s[%d]", path, i))
				if err == nil {
					found = true
					break
				}
				if first == nil {
					first = err
				}
			}
			if !found {
				if first == nil {
					return fmt.Errorf("%s[%d]: no element matches %s (the list is empty)", path, i, describe(ev))
				}
				return fmt.Errorf("%s[%d]: no element matches %s (closest: %v)", path, i, describe(ev), first)
			}
		}
		return nil
	}
	if en, ok := number(exp); ok {
		if an, ok := number(act); ok && an == en {
			return nil
		}
	} else if reflect.DeepEqual(exp, act) {
		return nil
	}
	return fmt.Errorf("%s: expected %s, got %s", show(path), describe(exp), describe(act))
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func show(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(x)
	case map[string]any:
		return "an object"
	case []any:
		return fmt.Sprintf("a list of %d", len(x))
	}
	return fmt.Sprint(v)
}
