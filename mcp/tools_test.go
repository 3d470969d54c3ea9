package mcp

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/*.golden.json, testdata/transcripts) from the current behaviour")

// listTools returns the tool list as a client sees it, as generic JSON.
func listTools(t *testing.T, s *Server) []map[string]any {
	t.Helper()
	cs := connect(t.Context(), t, s)
	var out []map[string]any
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		raw, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	return out
}

// TestToolListGolden pins the public tool surface: names, titles,
// descriptions, schemas and annotations. Run with -update after a deliberate
// change and review the diff.
func TestToolListGolden(t *testing.T) {
	tools := listTools(t, newTestServer(t, nil))
	got, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./mcp -run TestToolListGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tool list differs from %s (-got +want):\n%s", golden, cmp.Diff(string(got), string(want)))
	}
}

// TestEveryToolIsDescribed checks the rules every tool must follow,
// independently of the golden file's exact text.
func TestEveryToolIsDescribed(t *testing.T) {
	for _, tl := range listTools(t, newTestServer(t, nil)) {
		name := tl["name"].(string)
		if tl["title"] == nil || tl["description"] == nil {
			t.Errorf("%s: missing title or description", name)
		}
		ann, _ := tl["annotations"].(map[string]any)
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[h].(bool); !ok {
				t.Errorf("%s: annotation %s not set", name, h)
			}
		}
		in, _ := tl["inputSchema"].(map[string]any)
		if in["type"] != "object" || in["additionalProperties"] != false {
			t.Errorf("%s: inputSchema must be an object with additionalProperties false, got %v", name, in)
		}
		out, _ := tl["outputSchema"].(map[string]any)
		if out["type"] != "object" {
			t.Errorf("%s: outputSchema must be an object schema, got %v", name, out)
		}
		if !strings.HasPrefix(name, reservedPrefix) {
			t.Errorf("%s: kubepact's tools carry the %s prefix", name, reservedPrefix)
		}
	}
}

func TestReadOnlyRegistersNoWriter(t *testing.T) {
	tests := []struct {
		name       string
		opts       *Options
		want       []string
		wantWrites string // in the instructions
	}{
		{"default", &Options{}, []string{"pacto_check", "pacto_create", "pacto_edit", "pacto_explain_field", "pacto_schema", "pacto_server_info", "pacto_validate_payload"}, "Writes: only pacto_create and pacto_edit write"},
		{"read-only", &Options{ReadOnly: true}, []string{"pacto_check", "pacto_explain_field", "pacto_schema", "pacto_server_info", "pacto_validate_payload"}, "Writes: none. This server is read-only"},
		{"no families", &Options{Families: []Family{}}, []string{"pacto_server_info"}, "Writes: none. This server is read-only: no registered tool can change anything."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, tc.opts)
			var got []string
			for _, tl := range listTools(t, s) {
				got = append(got, tl["name"].(string))
				if ann := tl["annotations"].(map[string]any); tc.opts.ReadOnly && ann["readOnlyHint"] != true {
					t.Errorf("read-only server lists %s, which is not read-only", tl["name"])
				}
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("tools (-got +want):\n%s", diff)
			}
			if instr := s.instructions(); !strings.Contains(instr, tc.wantWrites) {
				t.Errorf("instructions lack %q:\n%s", tc.wantWrites, instr)
			}
		})
	}
}

// call invokes a tool in memory and returns the result.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func errorCode(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		return ""
	}
	e, _ := structured(t, res)["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func TestAuthoringToolsInMemory(t *testing.T) {
	ws := t.TempDir()
	cs := connect(t.Context(), t, newTestServer(t, &Options{Workspace: ws}))

	// Create with a native array (Pacto's silent no-op) and a string-encoded one.
	res := call(t, cs, "pacto_create", map[string]any{
		"name":        "orders",
		"description": "Orders REST API backed by postgres",
		"interfaces":  []any{map[string]any{"name": "events", "type": "asyncapi"}},
		"metadata":    `{"tier":"gold"}`,
	})
	if res.IsError {
		t.Fatalf("pacto_create: %s", text(res))
	}
	created := structured(t, res)
	if created["path"] != "orders" {
		t.Errorf("path = %v, want orders", created["path"])
	}
	if _, err := os.Stat(filepath.Join(ws, "orders", "pacto.yaml")); err != nil {
		t.Errorf("pacto.yaml not written: %v", err)
	}
	if strings.HasPrefix(strings.TrimSpace(text(res)), "{") {
		t.Errorf("text is a JSON dump, want a summary: %s", text(res))
	}

	// Refusals carry their code.
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code       string
	}{
		{"overwrite refused", "pacto_create", map[string]any{"name": "orders"}, "ALREADY_EXISTS"},
		{"outside the workspace", "pacto_create", map[string]any{"name": "x", "path": "../escape"}, "PATH_OUTSIDE_WORKSPACE"},
		{"unknown argument", "pacto_edit", map[string]any{"path": "orders", "add_interface": "[]"}, CodeInvalidArgument},
		{"wrong top-level type", "pacto_edit", map[string]any{"path": "orders", "add_interfaces": 3}, CodeInvalidArgument},
		{"bad enum", "pacto_create", map[string]any{"name": "y", "workload": "daemon"}, CodeInvalidArgument},
		{"bad item", "pacto_edit", map[string]any{"path": "orders", "add_interfaces": []any{map[string]any{"name": "x", "type": "soap"}}}, CodeInvalidArgument},
		{"missing contract", "pacto_check", map[string]any{"path": "nowhere"}, ""},
		{"unknown schema path", "pacto_schema", map[string]any{"path": "state.persistance"}, CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args)
			if tc.code == "" {
				return // only that it is answered, not a protocol error
			}
			if got := errorCode(t, res); got != tc.code {
				t.Errorf("code = %q, want %q (%s)", got, tc.code, text(res))
			}
		})
	}

	// Check, then replay a suggestion's toolCall verbatim.
	res = call(t, cs, "pacto_check", map[string]any{"path": "orders"})
	if res.IsError {
		t.Fatalf("pacto_check: %s", text(res))
	}
	checked := structured(t, res)
	if checked["valid"] != true {
		t.Fatalf("created contract is not valid: %v", checked)
	}
	suggestions, _ := checked["suggestions"].([]any)
	for _, sg := range suggestions {
		tc, _ := sg.(map[string]any)["toolCall"].(map[string]any)
		if tc == nil {
			continue
		}
		res := call(t, cs, tc["tool"].(string), tc["params"])
		if res.IsError {
			t.Errorf("replaying suggestion %v failed: %s", tc, text(res))
		}
	}

	// Edit that changes nothing: [] plus a warning, never null.
	res = call(t, cs, "pacto_edit", map[string]any{"path": "orders", "dry_run": true, "set_metadata": map[string]any{"tier": "gold"}})
	if res.IsError {
		t.Fatalf("pacto_edit: %s", text(res))
	}
	if changes, ok := structured(t, res)["changes"].([]any); !ok {
		t.Errorf("changes is not an array: %v", structured(t, res)["changes"])
	} else if len(changes) == 0 && len(structured(t, res)["warnings"].([]any)) == 0 {
		t.Errorf("a no-op edit carries no warning: %s", text(res))
	}

	res = call(t, cs, "pacto_schema", map[string]any{"path": "state.persistence.durability"})
	if res.IsError {
		t.Fatalf("pacto_schema: %s", text(res))
	}
	if f, _ := structured(t, res)["field"].(map[string]any); f == nil || len(f["allowedValues"].([]any)) == 0 {
		t.Errorf("field help lacks allowed values: %v", structured(t, res))
	}
	res = call(t, cs, "pacto_schema", map[string]any{})
	if js, _ := structured(t, res)["jsonSchema"].(map[string]any); js["$schema"] == nil {
		t.Errorf("pacto_schema without path does not return the schema document")
	}
}
