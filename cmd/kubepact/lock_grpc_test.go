//go:build !sidecaronly

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/freeport"
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

// TestLockDigestCoversGRPCTools: under a lock that pins gRPC tools, the
// lockDigest `kubepact mcp` and `kubepact sidecar` report (pacto_withheld
// and pacto_server_info) is the lock file's own, and the lock summary
// counts the gRPC entries; once an RPC drifts, the summary names it and
// the reported digest is no longer the lock's.
func TestLockDigestCoversGRPCTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot(t), "examples", "grpc", "inventory"))); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(t.TempDir(), "inventory.lock.json")
	if stdout, stderr, code := runKubepact(t, "lock", dir, "-o", lockPath); code != 0 {
		t.Fatalf("kubepact lock: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	raw, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		LockDigest string           `json:"lockDigest"`
		GRPC       []map[string]any `json:"grpc"`
	}
	if err := json.Unmarshal(raw, &lock); err != nil || len(lock.GRPC) != 5 || !strings.HasPrefix(lock.LockDigest, "sha256:") {
		t.Fatalf("the lock file (%v): %s", err, raw)
	}

	// reported reads the digest and the lock summary from both tools.
	reported := func(t *testing.T, cs *sdk.ClientSession) (withheldDigest, infoDigest string, summary map[string]any) {
		t.Helper()
		w := structuredOf(t, cs, "pacto_withheld")
		info := structuredOf(t, cs, "pacto_server_info")
		g, _ := info["generatedTools"].(map[string]any)
		summary, _ = w["lock"].(map[string]any)
		if gl, _ := g["lock"].(map[string]any); !reflect.DeepEqual(gl, summary) {
			t.Errorf("pacto_server_info's lock %v differs from pacto_withheld's %v", gl, summary)
		}
		ws, _ := w["lockDigest"].(string)
		gs, _ := g["lockDigest"].(string)
		return ws, gs, summary
	}
	args := []string{"--grpc-target", "127.0.0.1:9", "--allow-writes", "--tools-lock", lockPath}

	t.Run("mcp", func(t *testing.T) {
		cs, _ := startMCPStdio(t, append([]string{dir}, args...)...)
		wd, gd, sum := reported(t, cs)
		if wd != lock.LockDigest || gd != lock.LockDigest {
			t.Errorf("reported lockDigest %s (pacto_withheld), %s (pacto_server_info); want the lock file's %s", wd, gd, lock.LockDigest)
		}
		if sum["lockDigest"] != lock.LockDigest || sum["locked"] != float64(5) || len(sum["drifted"].([]any)) != 0 {
			t.Errorf("lock summary %v; want the lock's digest, 5 locked, none drifted", sum)
		}
	})
	t.Run("sidecar", func(t *testing.T) {
		port, hport := freeport.Port(t), freeport.Port(t)
		p := launchSidecar(t, append([]string{"sidecar", "--bundle", dir, "--upstream", "http://127.0.0.1:9",
			"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(hport), "--no-cache"}, args...), port, hport)
		wd, gd, sum := reported(t, p.connect(t))
		if wd != lock.LockDigest || gd != lock.LockDigest {
			t.Errorf("sidecar reported lockDigest %s, %s; want the lock file's %s", wd, gd, lock.LockDigest)
		}
		if sum["locked"] != float64(5) {
			t.Errorf("sidecar lock summary %v; want 5 locked", sum)
		}
	})

	p := filepath.Join(dir, "interfaces", "inventory", "v1", "inventory.proto")
	proto, _ := os.ReadFile(p)
	changed := strings.Replace(string(proto), "message SetStockRequest {", "message SetStockRequest {\n  string reason = 99;", 1)
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil || changed == string(proto) {
		t.Fatalf("editing the proto: %v", err)
	}
	t.Run("drift", func(t *testing.T) {
		cs, _ := startMCPStdio(t, append([]string{dir}, args...)...)
		wd, _, sum := reported(t, cs)
		if wd == lock.LockDigest || !strings.HasPrefix(wd, "sha256:") {
			t.Errorf("with SetStock drifted the reported lockDigest is %s; want another than the lock's", wd)
		}
		drifted, _ := sum["drifted"].([]any)
		if sum["lockDigest"] != lock.LockDigest || len(drifted) != 1 || drifted[0] != "Inventory_SetStock" || sum["locked"] != float64(5) {
			t.Errorf("lock summary %v; want the lock's digest, 5 locked, Inventory_SetStock drifted", sum)
		}
	})
}

// structuredOf calls a tool without arguments and returns its
// structuredContent.
func structuredOf(t *testing.T, cs *sdk.ClientSession, name string) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	if res.IsError || m == nil {
		t.Fatalf("%s: %+v", name, res.Content)
	}
	return m
}
