package bundle

import (
	"sort"
	"strings"
)

// Suggest returns the names closest to word (edit distance at most a third of its length, at least
// 2, or containing it), best first, at most three.
func Suggest(word string, names []string) []string {
	type scored struct {
		name string
		d    int
	}
	limit := len(word) / 3
	if limit < 2 {
		limit = 2
	}
	var hits []scored
	for _, n := range names {
		d := distance(strings.ToLower(word), strings.ToLower(n))
		if d <= limit || (len(word) >= 3 && strings.Contains(n, word)) {
			hits = append(hits, scored{n, d})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].d != hits[j].d {
			return hits[i].d < hits[j].d
		}
		return hits[i].name < hits[j].name
	})
	var out []string
	for i := 0; i < len(hits) && i < 3; i++ {
		out = append(out, hits[i].name)
	}
	return out
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
