package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// catalogWithEdit copies the catalog example and replaces old with new in
// its OpenAPI document.
func catalogWithEdit(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../examples/bundles/catalog")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "interfaces", "openapi.yaml")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("the catalog spec has no %q", old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestToolsLockThroughMCP: a lock made from the catalog, served against a
// catalog whose adjustStock schema and getHealth operation changed, and
// that gained nothing: exactly the changed tools are withheld with DRIFT,
// and a call to one answers TOOL_WITHHELD naming DRIFT.
func TestToolsLockThroughMCP(t *testing.T) {
	b, err := bundle.LoadDir("../examples/bundles/catalog", nil)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := openapitools.Project(t.Context(), b, &openapitools.Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	lock := openapitools.NewLock(orig)
	dir := catalogWithEdit(t, "delta: {type: integer, minimum: -10000, maximum: 10000}", "delta: {type: integer, minimum: -10000, maximum: 99999}")
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: "http://127.0.0.1:9", AllowWrites: true, ConfirmWrites: openapitools.ConfirmNever, Lock: lock}, nil)
	cs := connect(t.Context(), t, s)

	var listed []string
	for _, tl := range listTools(t, s) {
		listed = append(listed, tl["name"].(string))
	}
	if slices.Contains(listed, "adjustStock") || !slices.Contains(listed, "createProduct") {
		t.Errorf("tools/list %v; want every catalog tool but adjustStock", listed)
	}

	res := callTool(t, cs, "adjustStock", map[string]any{"productId": "p-0001", "body": map[string]any{"delta": 1}})
	te, _ := structured(t, res)["error"].(map[string]any)
	if !res.IsError || te["code"] != CodeToolWithheld || te["reason"] != openapitools.WithheldDrift {
		t.Fatalf("calling the drifted tool: %s; want TOOL_WITHHELD with reason DRIFT", text(res))
	}
	if !strings.Contains(text(res), "input schema") || !strings.Contains(text(res), "kubepact lock") {
		t.Errorf("the error %q does not say what drifted and how to relock", text(res))
	}

	w := structured(t, callTool(t, cs, "pacto_withheld", map[string]any{}))
	var drifted []string
	for _, e := range w["withheld"].([]any) {
		if m := e.(map[string]any); m["code"] == openapitools.WithheldDrift {
			drifted = append(drifted, m["name"].(string))
		}
	}
	if !slices.Equal(drifted, []string{"adjustStock"}) {
		t.Errorf("pacto_withheld DRIFT entries %v; want [adjustStock]", drifted)
	}
	l, _ := w["lock"].(map[string]any)
	if l["surfaceDigest"] != lock.SurfaceDigest || l["locked"] != float64(7) {
		t.Errorf("pacto_withheld lock %v; want the lock's digest and 7 locked tools", l)
	}

	info := structured(t, callTool(t, cs, "pacto_server_info", map[string]any{}))
	g, _ := info["generatedTools"].(map[string]any)
	want := s.opts.Capability.Capability.SurfaceDigest
	if g["surfaceDigest"] != want || want == lock.SurfaceDigest || !strings.HasPrefix(want, "sha256:") {
		t.Errorf("server info surface %v; want %s, which differs from the lock's", g["surfaceDigest"], want)
	}
	if gl, _ := g["lock"].(map[string]any); gl == nil || len(gl["drifted"].([]any)) != 1 {
		t.Errorf("server info lock %v; want adjustStock drifted", g["lock"])
	}
	if !strings.Contains(s.instructions(), "held to a tools lock") {
		t.Error("the instructions do not say the tools are held to a lock")
	}
}

// TestToolsLockMissingToolIsReported: a locked tool the bundle lost is
// listed as missing by pacto_withheld and pacto_server_info.
func TestToolsLockMissingToolIsReported(t *testing.T) {
	b, err := bundle.LoadDir("../examples/bundles/catalog", nil)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := openapitools.Project(t.Context(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := catalogWithEdit(t, "operationId: getProduct", "operationId: fetchProduct")
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: "http://127.0.0.1:9", Lock: openapitools.NewLock(orig)}, nil)
	cs := connect(t.Context(), t, s)
	w := structured(t, callTool(t, cs, "pacto_withheld", map[string]any{}))
	missing := w["lock"].(map[string]any)["missing"].([]any)
	if len(missing) != 1 || missing[0].(map[string]any)["name"] != "getProduct" || missing[0].(map[string]any)["path"] != "/products/{productId}" {
		t.Errorf("missing %v; want getProduct GET /products/{productId}", missing)
	}
	info := structured(t, callTool(t, cs, "pacto_server_info", map[string]any{}))
	if m := info["generatedTools"].(map[string]any)["lock"].(map[string]any)["missing"].([]any); len(m) != 1 {
		t.Errorf("server info missing %v; want getProduct", m)
	}
	// The renamed operation is new to the lock: withheld.
	if res := callTool(t, cs, "fetchProduct", map[string]any{"productId": "p-0001"}); !strings.Contains(text(res), "DRIFT") {
		t.Errorf("calling the renamed tool: %s; want TOOL_WITHHELD DRIFT", text(res))
	}
}
