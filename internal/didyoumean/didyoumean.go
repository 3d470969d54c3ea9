// Package didyoumean finds the accepted name an agent most likely meant
// when it gave an unknown one: the one algorithm behind every did-you-mean
// kubepact answers with (tool arguments, fields of structured arguments,
// schema paths, names in a contract).
//
// It imports the standard library only, so any package may use it.
package didyoumean

import "strings"

// Nearest returns the accepted name nearest to name, or "" when none is
// close: names equal after dropping case and separators (dryRun, dry-run →
// dry_run) first, then a small edit distance, then a name that contains
// the given one.
func Nearest(name string, accepted []string) string {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch r {
			case '_', '-', '.', ' ':
				return -1
			}
			return r
		}, strings.ToLower(s))
	}
	n := norm(name)
	if len(n) > 64 { // not a typo of any argument name; keeps the work bounded
		return ""
	}
	best, bestDist := "", -1
	for _, a := range accepted {
		na := norm(a)
		if na == n {
			return a
		}
		limit := max(1, min(len(n), len(na))/3)
		if d := editDistance(n, na); d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = a, d
		}
	}
	if best != "" || len(n) < 4 {
		return best
	}
	// A fragment of an accepted name (interfaces → add_interfaces) is a
	// likelier intent than nothing; the closest such name wins.
	for _, a := range accepted {
		na := norm(a)
		if d := editDistance(n, na); strings.Contains(na, n) && (bestDist < 0 || d < bestDist) {
			best, bestDist = a, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b, by
// bytes: insertions, deletions, substitutions and adjacent transpositions
// (naem → name) each cost one.
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}
