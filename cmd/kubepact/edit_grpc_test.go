//go:build !sidecaronly

package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPactoEditAddsGRPCInterface: a real MCP client (the Go SDK over
// stdio, to the built binary) adds a grpc interface to an existing
// contract with pacto_edit; pacto_check then passes (the scaffolded
// .proto compiles), and serving the edited bundle offers the scaffold's
// RPC as a tool. Hostile names — a path out of the bundle, a folder, a
// name taken by an interface of another type — are clear errors that
// write nothing.
func TestPactoEditAddsGRPCInterface(t *testing.T) {
	// The workspace is one level down in a directory of its own, so
	// where ../../escape would land is watched too.
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.CopyFS(filepath.Join(ws, "catalog"), os.DirFS(filepath.Join(repoRoot(t), "examples", "bundles", "catalog"))); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, ws)
	cs, _ := startMCPStdioIn(t, ws)

	for _, bad := range []struct {
		name, iface, code, says string
	}{
		{"traversal", "../../escape", "INVALID_ARGUMENT", "must be letters, digits"},
		{"folder", "sub/stock", "INVALID_ARGUMENT", "must be letters, digits"},
		{"hidden traversal", "stock..proto", "INVALID_ARGUMENT", "must be letters, digits"},
		{"taken by another type", "http", "ALREADY_EXISTS", `interface "http" already exists as type openapi`},
	} {
		res := callStdio(t, cs, "pacto_edit", map[string]any{"path": "catalog", "add_interfaces": []any{map[string]any{"name": bad.iface, "type": "grpc"}}})
		te, _ := res.StructuredContent.(map[string]any)["error"].(map[string]any)
		if !res.IsError || te["code"] != bad.code || !strings.Contains(textOf(res), bad.says) {
			t.Errorf("%s (%q): %s; want %s saying %q", bad.name, bad.iface, textOf(res), bad.code, bad.says)
		}
	}
	if after := snapshotDir(t, ws); !maps.Equal(before, after) {
		t.Fatalf("a refused edit changed the workspace:\nbefore %v\nafter  %v", keys(before), keys(after))
	}

	res := callStdio(t, cs, "pacto_edit", map[string]any{"path": "catalog", "add_interfaces": []any{map[string]any{"name": "stock-levels", "type": "grpc"}}})
	if res.IsError || !strings.Contains(textOf(res), "interfaces/stock-levels.proto") {
		t.Fatalf("pacto_edit adding a grpc interface: %s", textOf(res))
	}
	proto, err := os.ReadFile(filepath.Join(ws, "catalog", "interfaces", "stock-levels.proto"))
	if err != nil || !strings.Contains(string(proto), "service StockLevels") {
		t.Fatalf("the scaffolded proto (%v):\n%s", err, proto)
	}
	res = callStdio(t, cs, "pacto_check", map[string]any{"path": "catalog"})
	if got, _ := res.StructuredContent.(map[string]any); res.IsError || got["valid"] != true {
		t.Fatalf("pacto_check after the edit: %s", textOf(res))
	}

	// Serving the edited bundle: the OpenAPI tools as before, and the
	// scaffold's RPC (not NO_SIDE_EFFECTS, so with --allow-writes).
	served, _ := startMCPStdio(t, filepath.Join(ws, "catalog"), "--base-url", "http://127.0.0.1:9", "--grpc-target", "127.0.0.1:9", "--allow-writes")
	names := listedTools(t, served)
	if !slices.Contains(names, "StockLevels_Check") || !slices.Contains(names, "listProducts") {
		t.Errorf("tools of the edited bundle %v; want StockLevels_Check beside the OpenAPI tools", names)
	}
	w, _ := callStdio(t, served, "pacto_withheld", map[string]any{}).StructuredContent.(map[string]any)
	raw, _ := json.Marshal(w["grpcInterfaces"])
	if !strings.Contains(string(raw), `"proto":"interfaces/stock-levels.proto"`) || !strings.Contains(string(raw), `"exposed":1`) {
		t.Errorf("pacto_withheld grpcInterfaces %s; want the scaffold's interface with one tool", raw)
	}
}

// startMCPStdioIn is startMCPStdio with the given workspace.
func startMCPStdioIn(t *testing.T, ws string, args ...string) (*sdk.ClientSession, *syncBuffer) {
	t.Helper()
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, append([]string{"mcp", "--workspace", ws}, args...)...)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, stderr
}

func callStdio(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// snapshotDir maps every file below dir to its content.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		out[p] = string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Outside the workspace, beside it: where ../../escape would land.
	if entries, err := os.ReadDir(filepath.Dir(dir)); err == nil {
		for _, e := range entries {
			out["../"+e.Name()] = ""
		}
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
