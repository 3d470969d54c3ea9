package didyoumean

import "testing"

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
