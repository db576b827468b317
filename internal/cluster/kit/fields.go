package kit

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The codecs of a resource's Fields: plans compare fields as strings, so a provider encodes what
// it wants and what it observes the same way, and decodes a field to call its API.

// Map encodes a map as its k=v pairs sorted by key, joined by commas ("" for none).
func Map(m map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

// ParseMap decodes Map's form (an item without '=' is a key with an empty value).
func ParseMap(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range ParseList(s) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// List encodes a list as its items joined by commas, in order.
func List(items []string) string { return strings.Join(items, ",") }

// ParseList decodes List's form; "" is no items.
func ParseList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Bool encodes a bool as "true" or "false".
func Bool(b bool) string { return strconv.FormatBool(b) }

// ParseBool decodes Bool's form: "true" is true, anything else false.
func ParseBool(s string) bool { return s == "true" }
