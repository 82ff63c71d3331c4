package toolsets

import (
	"slices"
	"sort"
	"strings"
)

// Closest returns up to n of cands nearest to name by edit distance
// (at most a third of the name's length, at least 2), nearest first, ties
// by name.
func Closest(name string, cands []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	limit := max(2, len(name)/3)
	var out []scored
	for _, c := range slices.Compact(slices.Sorted(slices.Values(cands))) {
		if d := distance(name, c); d <= limit || strings.Contains(c, name) && len(name) >= 3 {
			out = append(out, scored{c, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	names := make([]string, 0, min(n, len(out)))
	for i := range min(n, len(out)) {
		names = append(names, out[i].s)
	}
	return names
}

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
