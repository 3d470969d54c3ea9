//go:build !sidecaronly

package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/demoservice"
)

// serveCatalog starts `kubepact mcp` on the catalog example with args and
// returns the session, its stderr and the generated tools by name.
func serveCatalog(t *testing.T, args ...string) (*sdk.ClientSession, map[string]*sdk.Tool) {
	t.Helper()
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, append([]string{"mcp", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "--base-url", demo.URL, "--workspace", t.TempDir()}, args...)...)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	tools := map[string]*sdk.Tool{}
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tl.Name] = tl
	}
	return cs, tools
}

// withheldCodes calls pacto_withheld and returns tool name → "CODE: reason".
func withheldCodes(t *testing.T, cs *sdk.ClientSession) map[string]string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_withheld", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("pacto_withheld: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Withheld []struct{ Name, Code, Reason string }
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, w := range out.Withheld {
		m[w.Name] = w.Code + ": " + w.Reason
	}
	return m
}

// TestFilterFlags: the tag and path filters and the description overrides
// file work as flags of `kubepact mcp`; what they withhold is listed by
// pacto_withheld (FILTERED, in flag words) and refused by name with the
// flag that would expose it; a typo in a filter stops the server with what
// is accepted; `kubepact lock --descriptions-file` pins the descriptions
// shown, so a server without the file withholds those tools (DRIFT).
func TestFilterFlags(t *testing.T) {
	descs := filepath.Join(t.TempDir(), "descriptions.yaml")
	if err := os.WriteFile(descs, []byte("getProduct: Read one product of the catalog by its id.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, tools := serveCatalog(t, "--include-paths", "/products", "--exclude-paths", "/products/{productId}/stock", "--descriptions-file", descs, "--allow-writes")
	for _, name := range []string{"getHealth", "adjustStock"} {
		if tools[name] != nil {
			t.Errorf("%s is listed; the path filters withhold it", name)
		}
	}
	if tl := tools["getProduct"]; tl == nil || !strings.HasPrefix(tl.Description, "Read one product of the catalog by its id.\n\nGET /products/{productId}") {
		t.Errorf("getProduct: %+v, want the overriding description", tl)
	}
	w := withheldCodes(t, cs)
	if got := w["getHealth"]; got != "FILTERED: filtered by --include-paths: its path is under none of the included prefixes" {
		t.Errorf("pacto_withheld getHealth: %q", got)
	}
	if got := w["adjustStock"]; got != "FILTERED: filtered by --exclude-paths: its path is under /products/{productId}/stock" {
		t.Errorf("pacto_withheld adjustStock: %q", got)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "--include-paths") {
		t.Errorf("calling a filtered tool: %v %+v; want TOOL_WITHHELD naming the flag", err, res)
	}

	_, stderr, code := runKubepact(t, "mcp", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "--exclude-paths", "/product")
	if code != 2 || !strings.Contains(stderr, `--exclude-paths: no operation's path is under "/product"`) {
		t.Errorf("a prefix no path has: exit %d, stderr %s", code, stderr)
	}
	_, stderr, code = runKubepact(t, "mcp", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "--include-tags", "products")
	if code != 2 || !strings.Contains(stderr, `--include-tags: no operation is tagged "products" (tags: none)`) {
		t.Errorf("a tag no operation has: exit %d, stderr %s", code, stderr)
	}

	lock := filepath.Join(t.TempDir(), "catalog.lock.json")
	if _, stderr, code := runKubepact(t, "lock", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "-o", lock, "--descriptions-file", descs); code != 0 {
		t.Fatalf("lock: exit %d: %s", code, stderr)
	}
	cs, tools = serveCatalog(t, "--tools-lock", lock)
	if tools["getProduct"] != nil || !strings.HasPrefix(withheldCodes(t, cs)["getProduct"], "DRIFT") {
		t.Errorf("getProduct without the descriptions its lock pins: listed %v, withheld %q; want DRIFT", tools["getProduct"] != nil, withheldCodes(t, cs)["getProduct"])
	}
	if tools["listProducts"] == nil {
		t.Error("listProducts, not overridden, is withheld")
	}
	_, tools = serveCatalog(t, "--tools-lock", lock, "--descriptions-file", descs)
	if names := toolNames(tools); !slices.Contains(names, "getProduct") {
		t.Errorf("with the same descriptions file getProduct is withheld: %v", names)
	}
}

func toolNames(m map[string]*sdk.Tool) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
