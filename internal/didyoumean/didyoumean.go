// Package didyoumean finds the accepted name an agent most likely meant
// when it gave an unknown one: the one algorithm behind every did-you-mean
// kubepact answers with (tool arguments, fields of structured arguments,
// schema paths, names in a contract, fleet candidates).
//
// It imports the standard library only, so any package may use it.
package didyoumean

import "strings"

// maxLen bounds the names compared by edit distance: a longer one is not a
// typo of any name kubepact accepts, and the bound keeps the work small.
const maxLen = 64

// Nearest returns the accepted name nearest to name, or "" when none is
// close: names equal after dropping case and separators (dryRun, dry-run →
// dry_run) first, then a small edit distance, then a name that contains
// the given one.
func Nearest(name string, accepted []string) string {
	n := normalize(name)
	if len(n) > maxLen {
		return ""
	}
	best, bestDist := "", -1
	for _, a := range accepted {
		if d, ok := typo(n, normalize(a)); ok && (bestDist < 0 || d < bestDist) {
			if d == 0 {
				return a
			}
			best, bestDist = a, d
		}
	}
	if best != "" || len(n) < 4 {
		return best
	}
	// A fragment of an accepted name (interfaces → add_interfaces) is a
	// likelier intent than nothing; the closest such name wins.
	for _, a := range accepted {
		na := normalize(a)
		if d := editDistance(n, na); strings.Contains(na, n) && (bestDist < 0 || d < bestDist) {
			best, bestDist = a, d
		}
	}
	return best
}

// Typo reports whether candidate is close enough to name to be offered
// for it, and how far apart the two are: 0 when they are equal after
// dropping case and separators, else their edit distance, which must be
// at most a third of the shorter name (at least one). Callers that rank
// several candidates order them by the distance; Nearest applies the
// same rule.
func Typo(name, candidate string) (dist int, ok bool) {
	n := normalize(name)
	if len(n) > maxLen {
		return 0, false
	}
	return typo(n, normalize(candidate))
}

// typo is Typo on normalized names.
func typo(n, na string) (int, bool) {
	if n == na {
		return 0, true
	}
	d := editDistance(n, na)
	return d, d <= max(1, min(len(n), len(na))/3)
}

// normalize folds case and drops the separators agents vary on.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(s))
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
