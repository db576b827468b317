package emucore

import "strings"

// Route is one operation of a REST service: the HTTP method, the path pattern it answers
// ("clusters/*/node-groups": segments separated by "/", "*" any one segment), the operation's
// name as the service's SDKs know it, and what serves it.
type Route[H any] struct {
	Method  string
	Pattern string
	Op      string
	Handler H
}

// Routes is a service's table of operations. A request is served by the first route whose method
// and pattern match it; an emulator answers any other with its service's own error, naming what
// it implements (Ops).
type Routes[H any] []Route[H]

// Match finds the route of a request with method whose path is segs (segments as sent, unescaped).
// With fold, segments compare case-insensitively (patterns are then lower case), as ARM's paths
// do. pathKnown reports whether some route has that path with another method.
func (rs Routes[H]) Match(method string, segs []string, fold bool) (r *Route[H], pathKnown bool) {
	for i := range rs {
		if !matchPattern(rs[i].Pattern, segs, fold) {
			continue
		}
		if rs[i].Method == method {
			return &rs[i], true
		}
		pathKnown = true
	}
	return nil, pathKnown
}

// Ops names the operations of the table, in its order.
func (rs Routes[H]) Ops() []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Op)
	}
	return out
}

func matchPattern(pattern string, segs []string, fold bool) bool {
	p := strings.Split(pattern, "/")
	if len(p) != len(segs) {
		return false
	}
	for i := range p {
		s := segs[i]
		if fold {
			s = strings.ToLower(s)
		}
		if p[i] != "*" && p[i] != s {
			return false
		}
	}
	return true
}
