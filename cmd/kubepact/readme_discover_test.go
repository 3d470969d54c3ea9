//go:build !sidecaronly

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadmeDiscoverLine runs "Large APIs: discovery mode"'s line
// verbatim: the catalog in discovery mode offers the four discovery tools
// (pacto_call_write only with --allow-writes, so three here) and the
// pinned getHealth, and no other generated tool.
func TestReadmeDiscoverLine(t *testing.T) {
	lines := readmeCommands(t, "discover")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "kubepact mcp examples/bundles/catalog ") || !strings.Contains(lines[0], "--tool-mode discover") {
		t.Fatalf("the README's discover block is %q", lines)
	}
	work := t.TempDir()
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	if err := os.CopyFS(filepath.Join(work, "examples", "bundles", "catalog"), os.DirFS(catalog)); err != nil {
		t.Fatal(err)
	}
	env, _ := readmeEnv(t)
	names := listedTools(t, connectStdio(t, readmeLine(t.Context(), work, env, lines[0])))
	for _, want := range []string{"pacto_search_operations", "pacto_describe_operations", "pacto_call_read", "getHealth"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s: tools %v lack %s", lines[0], names, want)
		}
	}
	for _, not := range []string{"listProducts", "getProduct", "pacto_call_write"} {
		if slices.Contains(names, not) {
			t.Errorf("%s offers %s: %v", lines[0], not, names)
		}
	}
}
