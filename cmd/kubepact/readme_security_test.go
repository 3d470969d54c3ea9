//go:build !sidecaronly

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSecurityTableNamesRealTests reads the README's security table
// and checks that every test it gives as the proof of a guarantee exists,
// in the package the row names: a guarantee whose test was renamed or
// removed would otherwise go on being claimed with nothing behind it.
func TestReadmeSecurityTableNamesRealTests(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Security: ")
	if !ok {
		t.Fatal(`README.md has no "## Security: " section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	pkgRE := regexp.MustCompile("`(\\./[a-z0-9/]+)`")
	nameRE := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")
	rows := 0
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "surface" {
			continue
		}
		rows++
		proof := cells[len(cells)-2]
		if strings.TrimSpace(proof) == "" {
			t.Errorf("the row %q names no test", strings.TrimSpace(cells[1]))
			continue
		}
		// Each test belongs to the package named last before it; a Fuzz
		// target given as `make fuzz` is looked up in the Makefile.
		pkg := ""
		for _, m := range regexp.MustCompile("`[^`]+`").FindAllString(proof, -1) {
			if p := pkgRE.FindStringSubmatch(m); p != nil {
				pkg = p[1]
				continue
			}
			n := nameRE.FindStringSubmatch(m)
			if n == nil {
				continue
			}
			if strings.HasPrefix(n[1], "Fuzz") && pkg == "" {
				if !fileHas(t, filepath.Join(root, "Makefile"), n[1]) {
					t.Errorf("the security table says make fuzz runs %s; the Makefile does not", n[1])
				}
				continue
			}
			if pkg == "" {
				t.Errorf("the security table names %s without its package", n[1])
				continue
			}
			if !packageDefines(t, filepath.Join(root, pkg), n[1]) {
				t.Errorf("the security table names %s in %s; no such test is there", n[1], pkg)
			}
		}
	}
	if rows < 10 {
		t.Fatalf("read %d rows of the security table; the table's shape changed", rows)
	}
}

func fileHas(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), s)
}

// packageDefines reports whether a _test.go file of dir declares func name.
func packageDefines(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if fileHas(t, f, "\nfunc "+name+"(") {
			return true
		}
	}
	return false
}
