//go:build !sidecaronly

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLayout: the README's Layout table has a row for every package
// directory `go list ./...` finds, and every directory a row names exists,
// so the map a newcomer reads first cannot leave a package out or name one that is
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
	for _, p := range pkgs {
		if !rows[p] {
			t.Errorf("package directory %s has no row in the README's Layout section", p)
		}
	}
	for row := range rows {
		if _, err := os.Stat(filepath.Join(root, row)); err != nil {
			t.Errorf("the Layout section names %s, which is not in the tree", row)
		}
	}
}
