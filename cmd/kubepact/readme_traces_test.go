//go:build !sidecaronly

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadmeTracesLine runs the README's --traces line verbatim in a
// directory holding contracts/ (the example bundles) and traces.json
// (kubepact's own shop export): pacto_fleet_graph with include_observed
// then lists the traced orders -> payments calls as declared+observed.
func TestReadmeTracesLine(t *testing.T) {
	lines := readmeCommands(t, "traces")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "kubepact mcp --fleet --local ./contracts --traces traces.json") {
		t.Fatalf("the README's traces block is %q", lines)
	}
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "contracts"), os.DirFS(filepath.Join(repoRoot(t), "examples", "bundles"))); err != nil {
		t.Fatal(err)
	}
	export, err := os.ReadFile(filepath.Join(repoRoot(t), "fleetgraph", "testdata", "traces", "shop.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "traces.json"), export, 0o600); err != nil {
		t.Fatal(err)
	}
	env, _ := readmeEnv(t)
	cs := connectStdio(t, readmeLine(t.Context(), work, env, lines[0]))
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_graph", Arguments: map[string]any{"service": "orders", "include_observed": true}})
	if err != nil || res.IsError {
		t.Fatalf("pacto_fleet_graph: %v %v", err, res)
	}
	var got struct {
		Observed []struct {
			FromService, ToService, Provenance string
			Calls                              int
		} `json:"observed"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Observed) == 0 || got.Observed[0].FromService != "orders" || got.Observed[0].ToService != "payments" || got.Observed[0].Calls != 2 || got.Observed[0].Provenance != "declared+observed" {
		t.Errorf("observed edges %s, want orders -> payments, 2 calls, declared+observed", raw)
	}
}
