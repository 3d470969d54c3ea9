package kube_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the package's import rule: fleetgraph, bundle, the
// API types and Kubernetes libraries; never MCP, never a sibling feed.
func TestImports(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/kubepact/kubepact/"
	for dep := range strings.FieldsSeq(string(out)) {
		switch {
		case strings.Contains(dep, "modelcontextprotocol"):
			t.Errorf("fleetgraph/kube depends on %s", dep)
		case strings.HasPrefix(dep, mod) && dep != mod+"fleetgraph" && dep != mod+"fleetgraph/kube" && dep != mod+"api/v1alpha1" &&
			!strings.HasPrefix(dep, mod+"bundle") && dep != mod+"internal/jsonobj" && dep != mod+"internal/atomicfile" && dep != mod+"internal/jsonschemakw" && dep != mod+"internal/schemamsg" && dep != mod+"internal/memfs" && dep != mod+"internal/didyoumean" && dep != mod+"internal/schemacycle":
			t.Errorf("fleetgraph/kube imports %s; only fleetgraph, bundle and api/v1alpha1 are allowed", dep)
		}
	}
}
