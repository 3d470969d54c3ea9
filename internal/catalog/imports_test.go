package catalog_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the package's import rule: bundle and its
// sub-packages and general libraries; never MCP, never Kubernetes, never
// the fleet graph.
func TestImports(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/kubepact/kubepact/"
	for dep := range strings.FieldsSeq(string(out)) {
		switch {
		case strings.HasPrefix(dep, "k8s.io/"), strings.HasPrefix(dep, "sigs.k8s.io/"), strings.Contains(dep, "modelcontextprotocol"):
			t.Errorf("internal/catalog depends on %s", dep)
		case strings.HasPrefix(dep, mod) && !strings.HasPrefix(dep, mod+"bundle") && dep != mod+"internal/catalog" && dep != mod+"internal/jsonobj" && dep != mod+"internal/atomicfile" && dep != mod+"internal/jsonschemakw" && dep != mod+"internal/schemamsg" && dep != mod+"internal/memfs":
			t.Errorf("internal/catalog imports %s; only bundle and its sub-packages are allowed", dep)
		}
	}
}
