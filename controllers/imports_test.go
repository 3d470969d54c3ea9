package controllers_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the package's import rule: anything in the module but
// cmd (commands wire controllers, never the reverse), and never the test-only
// registry outside tests.
func TestImports(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(dep, "github.com/kubepact/kubepact/cmd") || dep == "github.com/kubepact/kubepact/test/testregistry" {
			t.Errorf("controllers depends on %s", dep)
		}
	}
}
