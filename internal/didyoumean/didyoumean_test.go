package didyoumean

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	accepted := []string{"add_interfaces", "dry_run", "name", "overwrite", "path", "http", "tier"}
	for in, want := range map[string]string{
		"dryRun":        "dry_run",
		"DRY-RUN":       "dry_run",
		"add_interface": "add_interfaces",
		"interfaces":    "add_interfaces", // a fragment of an accepted name
		"naem":          "name",
		"pth":           "path",
		"htp":           "http",
		"tierr":         "tier",
		"query":         "",
		"x":             "",
		"":              "",
	} {
		if got := Nearest(in, accepted); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Nearest("name", nil); got != "" {
		t.Errorf("Nearest with nothing accepted = %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"path", "pth", 1}, {"naem", "name", 1},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestTypo(t *testing.T) {
	for _, tt := range []struct {
		name, candidate string
		dist            int
		ok              bool
	}{
		{"orders", "Orders", 0, true},                                // case folds
		{"dry-run", "dry_run", 0, true},                              // separators drop
		{"ordres", "orders", 1, true},                                // a transposition costs one
		{"ordrs", "orders", 1, true},                                 // one deletion
		{"ordr", "orders", 2, false},                                 // two edits in a four-letter name is another name
		{"paymnts", "payments", 1, true},                             // limit is a third of the shorter name
		{"pamnts", "payments", 2, true},                              // two in six
		{"web", "api", 3, false},                                     // nothing alike
		{"x", "y", 1, true},                                          // the limit is at least one
		{strings.Repeat("a", 65), strings.Repeat("a", 65), 0, false}, // too long to be a typo
	} {
		dist, ok := Typo(tt.name, tt.candidate)
		if ok != tt.ok || (ok && dist != tt.dist) {
			t.Errorf("Typo(%q, %q) = %d, %v, want %d, %v", tt.name, tt.candidate, dist, ok, tt.dist, tt.ok)
		}
	}
}
