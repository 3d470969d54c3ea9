package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutMoving are the Layout rows of issue 22's target layout whose
// package is still at its old path in this tree (target → today's path).
// Once a move lands, its row here makes TestReadmeLayout fail: drop it.
var layoutMoving = map[string]string{
	"controllers/injection":        "controllers",
	"mcp/kubeauth":                 "controllers",
	"internal/authoring":           "bundle/authoring",
	"internal/catalog":             "bundle/catalog",
	"internal/payload":             "bundle/payload",
	"internal/schemacycle":         "bundle/schemacycle",
	"internal/openapitools":        "bundle/capability",
	"internal/openapitools/invoke": "bundle/capability",
	"internal/openapischema":       "bundle/capability",
	"internal/netx":                "bundle/capability",
	"internal/jsonschemakw":        "bundle/capability",
	"internal/schemamsg":           "bundle/validate",
	"internal/atomicfile":          "bundle/capability",
	"internal/sidecar":             "controllers",
}

// TestReadmeLayout: the README's Layout table has a row for every package
// directory `go list ./...` finds, and every directory a row names exists
// (but for the moves still in flight, layoutMoving), so the map a
// newcomer reads first cannot leave a package out or name one that is
// gone.
func TestReadmeLayout(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n### Layout\n")
	if !ok {
		t.Fatal(`README.md has no "### Layout" section`)
	}
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end]
	}
	cellRE := regexp.MustCompile("`([a-z0-9/-]+)`")
	rows := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		for _, m := range cellRE.FindAllStringSubmatch(cells[1], -1) {
			rows[m[1]] = true
		}
	}
	if len(rows) == 0 {
		t.Fatal("the Layout section has no rows")
	}

	cmd := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for dir := range strings.FieldsSeq(string(out)) {
		rel, err := filepath.Rel(abs, dir)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
	}
	oldPaths := map[string]bool{}
	for _, old := range layoutMoving {
		oldPaths[old] = true
	}
	for _, p := range pkgs {
		if !rows[p] && !oldPaths[p] {
			t.Errorf("package directory %s has no row in the README's Layout section", p)
		}
	}
	for row := range rows {
		_, statErr := os.Stat(filepath.Join(root, row))
		_, moving := layoutMoving[row]
		switch {
		case moving && statErr == nil && slices.Contains(pkgs, row):
			t.Errorf("%s is in the tree now: drop it from layoutMoving", row)
		case !moving && statErr != nil:
			t.Errorf("the Layout section names %s, which is not in the tree", row)
		}
	}
	for target, old := range layoutMoving {
		if !rows[target] {
			t.Errorf("layoutMoving names %s, which has no row in the Layout section", target)
		}
		if !slices.Contains(pkgs, old) {
			t.Errorf("layoutMoving says %s is still at %s, which is gone: drop the entry", target, old)
		}
	}
}
