//go:build !sidecaronly

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadmeGRPCLine runs the README's gRPC line as written, in a
// directory holding a copy of the gRPC example: its read-only RPCs are
// tools, its writes are not, and a call goes to --grpc-target, which its
// answer names when nothing serves there.
func TestReadmeGRPCLine(t *testing.T) {
	lines := readmeCommands(t, "grpc")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "kubepact mcp examples/grpc/inventory --grpc-target ") {
		t.Fatalf("the README's grpc block is %q", lines)
	}
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "examples", "grpc", "inventory"), os.DirFS(filepath.Join(repoRoot(t), "examples", "grpc", "inventory"))); err != nil {
		t.Fatal(err)
	}
	env, _ := readmeEnv(t)
	cs := connectStdio(t, readmeLine(t.Context(), work, env, lines[0]))
	names := listedTools(t, cs)
	for _, want := range []string{"Inventory_GetItem", "Inventory_ListItems", "pacto_withheld"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s: tools %v lack %s", lines[0], names, want)
		}
	}
	if slices.Contains(names, "Inventory_AddItem") {
		t.Errorf("%s offers Inventory_AddItem without --allow-writes: %v", lines[0], names)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "Inventory_GetItem", Arguments: map[string]any{"sku": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.StructuredContent.(map[string]any)
	switch got["code"] {
	case "UNAVAILABLE":
		// Nothing serves the README's target here: the answer says where it went, in words.
		text := res.Content[0].(*sdk.TextContent).Text
		if !strings.Contains(text, "127.0.0.1:9090") || strings.Contains(text, "dial tcp") {
			t.Errorf("the failed call's answer: %s", text)
		}
	case nil:
		t.Errorf("the call's answer has no status code: %v", res.StructuredContent)
	}
}
