package source_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the package's import rule: fleetgraph, bundle and
// general libraries; never Kubernetes, never MCP, never a sibling feed.
func TestImports(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/kubepact/kubepact/"
	for dep := range strings.FieldsSeq(string(out)) {
		switch {
		case strings.HasPrefix(dep, "k8s.io/"), strings.HasPrefix(dep, "sigs.k8s.io/"), strings.Contains(dep, "modelcontextprotocol"):
			t.Errorf("fleetgraph/source depends on %s", dep)
		case strings.HasPrefix(dep, mod) && dep != mod+"fleetgraph" && dep != mod+"fleetgraph/source" && !strings.HasPrefix(dep, mod+"bundle") &&
			dep != mod+"internal/jsonobj" && dep != mod+"internal/atomicfile" && dep != mod+"internal/jsonschemakw" && dep != mod+"internal/schemamsg" && dep != mod+"internal/memfs" && dep != mod+"internal/didyoumean" && dep != mod+"internal/schemacycle": // standard-library-only leaves any package may use
			t.Errorf("fleetgraph/source imports %s; only fleetgraph and bundle are allowed", dep)
		}
	}
}
