package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolError calls a tool that must fail and returns its error envelope.
func toolError(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *ToolError {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v succeeded; want an error: %s", name, args, text(res))
	}
	var env struct{ Error *ToolError }
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &env); err != nil || env.Error == nil {
		t.Fatalf("%s: structuredContent %s has no error envelope", name, raw)
	}
	return env.Error
}

// TestWorkspaceLinkLoopIsPathError: a symbolic link loop in the workspace,
// on the way to a bundle or as its pacto.yaml, answers an argument error on
// "path" that says the links loop, never INTERNAL.
func TestWorkspaceLinkLoopIsPathError(t *testing.T) {
	ws := t.TempDir()
	if err := os.Symlink("loop", filepath.Join(ws, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pacto.yaml", filepath.Join(ws, "svc", "pacto.yaml")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t.Context(), t, newTestServer(t, &Options{Workspace: ws}))
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"pacto_check", map[string]any{"path": "loop"}},
		{"pacto_check", map[string]any{"path": "loop/deeper"}},
		{"pacto_check", map[string]any{"path": "svc"}},
		{"pacto_edit", map[string]any{"path": "svc", "version": "2.0.0"}},
		{"pacto_create", map[string]any{"name": "x", "path": "loop/x"}},
		{"pacto_create", map[string]any{"name": "x", "path": "svc", "overwrite": true}},
	} {
		e := toolError(t, cs, tt.tool, tt.args)
		if e.Code != CodeInvalidArgument || e.Field != "path" || !strings.Contains(e.Message, "loop") {
			t.Errorf("%s %v: %+v; want %s on path saying the links loop", tt.tool, tt.args, e, CodeInvalidArgument)
		}
	}
}
