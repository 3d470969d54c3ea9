package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLockPinsGRPCTools: `kubepact lock` pins the gRPC tools; a server
// under that lock offers them, and withholds (DRIFT) the one whose
// request changed after the lock was written.
func TestLockPinsGRPCTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot(t), "examples", "grpc", "inventory"))); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runKubepact(t, "lock", dir)
	if code != 0 || !strings.Contains(stdout, "5 tool(s) of inventory") {
		t.Fatalf("kubepact lock: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "not pinned: Inventory_Sync (/inventory.v1.Inventory/Sync): bidirectional streaming") {
		t.Errorf("lock does not say what it leaves out: %q", stderr)
	}
	cs, _ := startMCPStdio(t, dir, "--grpc-target", "127.0.0.1:9", "--allow-writes")
	names := listedTools(t, cs)
	for _, want := range []string{"Inventory_GetItem", "Inventory_ListItems", "Inventory_SetStock", "Inventory_AddItem", "Inventory_DeleteItem"} {
		if !slices.Contains(names, want) {
			t.Errorf("under its own lock, tools %v lack %s", names, want)
		}
	}

	p := filepath.Join(dir, "interfaces", "inventory", "v1", "inventory.proto")
	raw, _ := os.ReadFile(p)
	changed := strings.Replace(string(raw), "message SetStockRequest {", "message SetStockRequest {\n  string reason = 99;", 1)
	if changed == string(raw) {
		t.Fatal("the example proto has no SetStockRequest")
	}
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, stderrBuf := startMCPStdio(t, dir, "--grpc-target", "127.0.0.1:9", "--allow-writes")
	names = listedTools(t, cs)
	if slices.Contains(names, "Inventory_SetStock") || !slices.Contains(names, "Inventory_GetItem") {
		t.Errorf("tools %v; want every locked gRPC tool but the changed SetStock", names)
	}
	if !strings.Contains(stderrBuf.String(), "withheld 1 gRPC tool(s) that do not match the tools lock tools.lock.json (in the bundle) (reason DRIFT): Inventory_SetStock") {
		t.Errorf("stderr does not report the drift:\n%s", stderrBuf)
	}
}

// TestAllowDenyOperationsApplyToGRPCTools: --allow-operations and
// --deny-operations name gRPC tools by tool name or Service/Method; a
// name no tool has is refused with the flag's name.
func TestAllowDenyOperationsApplyToGRPCTools(t *testing.T) {
	inv := filepath.Join(repoRoot(t), "examples", "grpc", "inventory")
	cs, _ := startMCPStdio(t, inv, "--grpc-target", "127.0.0.1:9", "--allow-writes",
		"--allow-operations", "Inventory/SetStock,Inventory_GetItem,Inventory_ListItems", "--deny-operations", "inventory.v1.Inventory/ListItems")
	var grpcTools []string
	for _, n := range listedTools(t, cs) {
		if strings.HasPrefix(n, "Inventory_") {
			grpcTools = append(grpcTools, n)
		}
	}
	slices.Sort(grpcTools)
	if !slices.Equal(grpcTools, []string{"Inventory_GetItem", "Inventory_SetStock"}) {
		t.Errorf("gRPC tools %v; want GetItem and SetStock", grpcTools)
	}
	_, stderr, code := runKubepact(t, "mcp", inv, "--deny-operations", "Inventory/Nope")
	if code == 0 || !strings.Contains(stderr, `--deny-operations: no tool is named "Inventory/Nope" (a gRPC tool is named by its tool name or as Service/Method; names: Inventory_AddItem`) {
		t.Errorf("an unknown name: exit %d, %q", code, stderr)
	}
	stdout, stderr, code := runKubepact(t, "lock", inv, "-o", "-", "--allow-operations", "Inventory/GetItem")
	if code != 0 || !strings.Contains(stdout, `"name": "Inventory_GetItem"`) || strings.Contains(stdout, "Inventory_ListItems") {
		t.Errorf("lock --allow-operations Inventory/GetItem: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
}
