//go:build !sidecaronly

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cyclicBundle writes a bundle whose OpenAPI holds the schema of issue 10
// (A: anyOf [$ref B, string]; B: allOf [$ref A]) on one query parameter,
// and a legitimate recursive body (a tree of nodes) on another operation.
func cyclicBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	spec, err := os.ReadFile("../../internal/openapitools/testdata/cyclic-openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"pacto.yaml":              "pactoVersion: \"2.0\"\nservice: {name: cycles, version: 1.0.0}\ninterfaces:\n  - {name: http, type: openapi, ref: interfaces/openapi.yaml}\n",
		"interfaces/openapi.yaml": string(spec),
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCyclicSchemaIsReportedAndNeverCrashes is issue 10's reproducer run
// against the built binary. Before schema cycles were found at load,
// `check` passed this bundle and the first call of getA killed the whole
// process with "fatal error: stack overflow" (recover cannot catch it).
func TestCyclicSchemaIsReportedAndNeverCrashes(t *testing.T) {
	dir := cyclicBundle(t)
	out, _, code := runKubepact(t, "check", dir, "-o", "json")
	if code != 1 || !strings.Contains(out, `"SCHEMA_REF_CYCLE"`) || !strings.Contains(out, "#/components/schemas/A → #/components/schemas/B → #/components/schemas/A") {
		t.Fatalf("check: exit %d, want 1 with a SCHEMA_REF_CYCLE finding naming A → B → A:\n%s", code, out)
	}

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(upstream.Close)
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, "mcp", dir, "--base-url", upstream.URL, "--allow-writes", "--workspace", t.TempDir())
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })

	// The call that used to kill the process: getA is not a tool, and
	// calling it anyway is an answer, not a crash.
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getA", Arguments: map[string]any{"q": 5}})
	if err == nil && !res.IsError {
		t.Fatalf("getA answered as a tool: %+v", res)
	}
	res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_withheld", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("pacto_withheld after calling getA (is the process alive?): %v %+v\nstderr: %s", err, res, stderr)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(raw), `"getA"`) || !strings.Contains(string(raw), "without descending into a property or an item") {
		t.Errorf("pacto_withheld does not list getA with the cycle as its reason: %s", raw)
	}
	tree := map[string]any{"name": "root", "children": []any{map[string]any{"name": "leaf", "children": []any{}}}}
	res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "postTree", Arguments: map[string]any{"body": tree}})
	if err != nil || res.IsError {
		t.Fatalf("postTree (legitimate recursion): %v %+v\nstderr: %s", err, res, stderr)
	}
}
