package diff_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the package's import rule: a contract diff needs
// bundle and its contract model, never the fleet, MCP or Kubernetes.
func TestImports(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/kubepact/kubepact/"
	for dep := range strings.FieldsSeq(string(out)) {
		switch {
		case strings.HasPrefix(dep, "k8s.io/"), strings.HasPrefix(dep, "sigs.k8s.io/"), strings.Contains(dep, "modelcontextprotocol"),
			strings.HasPrefix(dep, mod+"fleetgraph"), strings.HasPrefix(dep, mod+"mcp"):
			t.Errorf("bundle/diff depends on %s", dep)
		}
	}
}
