package v1alpha1_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the package's import rule: the API types import
// apimachinery (and the standard library) only, so any client can use them.
func TestImports(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{join .Imports \"\\n\"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for imp := range strings.FieldsSeq(string(out)) {
		if strings.Contains(imp, ".") && !strings.HasPrefix(imp, "k8s.io/apimachinery/") {
			t.Errorf("api/v1alpha1 imports %s; only k8s.io/apimachinery is allowed", imp)
		}
	}
}
