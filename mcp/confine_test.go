package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// TestAuthoringRefusesBundlesTheLoaderRefuses: a bundle directory already
// near the 10,000-entry limit is not pushed over it by pacto_create (refused
// before anything is written, naming the limit), and pacto_check does not
// call a bundle over the limit valid.
func TestAuthoringRefusesBundlesTheLoaderRefuses(t *testing.T) {
	ws := t.TempDir()
	docs := filepath.Join(ws, "big", "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	// 9,998 files and their directory: 9,999 entries, one under the limit.
	for i := range 9998 {
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("%05d.md", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t.Context(), t, newTestServer(t, &Options{Workspace: ws}))

	// pacto.yaml, interfaces/ and a spec in it: 10,002 entries.
	args := map[string]any{"name": "big", "interfaces": []any{map[string]any{"name": "api", "type": "openapi"}}}
	e := toolError(t, cs, "pacto_create", args)
	if e.Code != "INVALID_CONTRACT" || !strings.Contains(e.Message, "10002 entries") || !strings.Contains(e.Message, "more than 10000 entries") {
		t.Errorf("pacto_create over the entry limit: %+v; want INVALID_CONTRACT naming the limit", e)
	}
	for _, p := range []string{"big/pacto.yaml", "big/interfaces"} {
		if _, err := os.Lstat(filepath.Join(ws, filepath.FromSlash(p))); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was written by a refused create (%v)", p, err)
		}
	}

	// One file more than the limit allows, with a contract that is
	// otherwise valid.
	if err := os.WriteFile(filepath.Join(docs, "extra.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "big", "pacto.yaml"), []byte("pactoVersion: \"2.0\"\nservice:\n  name: big\n  version: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_check", Arguments: map[string]any{"path": "big"}})
	if err != nil {
		t.Fatal(err)
	}
	out := structured(t, res)
	raw, _ := json.Marshal(out["errors"])
	if out["valid"] != false || !strings.Contains(string(raw), "BUNDLE_NOT_LOADABLE") || !strings.Contains(string(raw), "more than 10000 entries") {
		t.Errorf("pacto_check of a bundle over the entry limit: valid=%v errors=%s; want invalid with BUNDLE_NOT_LOADABLE naming the limit", out["valid"], raw)
	}
}
