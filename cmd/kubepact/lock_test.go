//go:build !sidecaronly

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogBundle copies the catalog example into a temporary directory,
// with edits (old → new) applied to its OpenAPI document.
func catalogBundle(t *testing.T, edits ...[2]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot(t), "examples", "bundles", "catalog"))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "interfaces", "openapi.yaml")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	spec := string(raw)
	for _, e := range edits {
		if !strings.Contains(spec, e[0]) {
			t.Fatalf("the catalog spec has no %q", e[0])
		}
		spec = strings.Replace(spec, e[0], e[1], 1)
	}
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startMCPStdio runs `kubepact mcp ARGS…` over stdio.
func startMCPStdio(t *testing.T, args ...string) (*sdk.ClientSession, *syncBuffer) {
	t.Helper()
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, append([]string{"mcp", "--workspace", t.TempDir()}, args...)...)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, stderr
}

func listedTools(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return names
}

func TestLockCommand(t *testing.T) {
	dir := catalogBundle(t)
	stdout, stderr, code := runKubepact(t, "lock", dir)
	if code != 0 || !strings.Contains(stdout, "7 tool(s) of catalog, lockDigest sha256:") {
		t.Fatalf("kubepact lock DIR: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	written, err := os.ReadFile(filepath.Join(dir, "tools.lock.json"))
	if err != nil {
		t.Fatalf("the lock is not in the bundle: %v", err)
	}
	printed, _, code := runKubepact(t, "lock", dir, "-o", "-")
	if code != 0 || printed != string(written) {
		t.Errorf("kubepact lock -o - printed another lock than the one written (exit %d)", code)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".tools.lock.json.tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
	// The lock the bundle carries is read again unchanged when it is
	// relocked: writing a lock ignores the old one.
	again, _, _ := runKubepact(t, "lock", dir, "-o", "-")
	if again != printed {
		t.Error("relocking a bundle that carries its lock gave another lock")
	}
	_, stderr, code = runKubepact(t, "lock", "oci://127.0.0.1:1/x@sha256:"+strings.Repeat("0", 64))
	if code != 2 || !strings.Contains(stderr, "needs -o FILE") {
		t.Errorf("lock of an oci ref without -o: exit %d, %q", code, stderr)
	}
}

// TestToolsLockAtStartup: a bundle carrying its lock, then changed, offers
// every tool but the changed one; --tools-lock wins over the bundle's lock.
func TestToolsLockAtStartup(t *testing.T) {
	dir := catalogBundle(t)
	if _, stderr, code := runKubepact(t, "lock", dir); code != 0 {
		t.Fatal(stderr)
	}
	p := filepath.Join(dir, "interfaces", "openapi.yaml")
	raw, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(raw), "maximum: 10000}", "maximum: 20000}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, stderr := startMCPStdio(t, dir, "--base-url", "http://127.0.0.1:9", "--allow-writes")
	names := listedTools(t, cs)
	if slices.Contains(names, "adjustStock") || !slices.Contains(names, "deleteProduct") {
		t.Errorf("tools %v; want every catalog tool but the drifted adjustStock", names)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "adjustStock", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "(DRIFT)") {
		t.Errorf("calling adjustStock: %v %v; want TOOL_WITHHELD (DRIFT)", err, res)
	}
	if !strings.Contains(stderr.String(), "withheld 1 tool(s) that do not match the tools lock tools.lock.json (in the bundle) (reason DRIFT): adjustStock") {
		t.Errorf("stderr does not report the drift:\n%s", stderr)
	}

	fresh := filepath.Join(t.TempDir(), "fresh.lock.json")
	if _, stderr, code := runKubepact(t, "lock", dir, "-o", fresh); code != 0 {
		t.Fatal(stderr)
	}
	cs, _ = startMCPStdio(t, dir, "--base-url", "http://127.0.0.1:9", "--allow-writes", "--tools-lock", fresh)
	if names := listedTools(t, cs); !slices.Contains(names, "adjustStock") {
		t.Errorf("with --tools-lock of the changed bundle, tools %v; want adjustStock offered", names)
	}
}

func TestLockAndConfirmFlagErrors(t *testing.T) {
	dup := catalogBundle(t, [2]string{"operationId: replaceProduct", "operationId: getProduct"})
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"duplicate name (mcp)", []string{"mcp", dup, "--workspace", t.TempDir()},
			[]string{`"getProduct" is claimed twice`, `GET /products/{productId} of interface "http"`, `PUT /products/{productId} of interface "http"`}},
		{"duplicate name (sidecar)", []string{"sidecar", "--bundle", dup, "--upstream", "http://127.0.0.1:9"},
			[]string{`"getProduct" is claimed twice`, "GET /products/{productId}", "PUT /products/{productId}"}},
		{"missing lock file", []string{"mcp", catalogBundle(t), "--workspace", t.TempDir(), "--tools-lock", filepath.Join(t.TempDir(), "none.json")},
			[]string{"--tools-lock", "none.json"}},
		{"bad lock file", []string{"mcp", catalogBundle(t), "--workspace", t.TempDir(), "--tools-lock", filepath.Join(repoRoot(t), "go.mod")},
			[]string{"--tools-lock", "not a lock document"}},
		{"confirm policy", []string{"mcp", catalogBundle(t), "--workspace", t.TempDir(), "--confirm-writes", "sometimes"},
			[]string{`--confirm-writes "sometimes" is not accepted`, "delete, always or never"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runKubepact(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d; want 2 (stderr %q)", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// TestCredentialsStayOutOfURLs: a bundle that moves its apiKey from a
// header into the query gets no credential into a URL. Held to its lock,
// the tool drifts, even where the operator allows credentials in the
// query, and the reason says a credential would now go there; without a
// lock, the tool is withheld unless the operator passes
// --allow-credentials-in-query, and then the service sees the key there.
func TestCredentialsStayOutOfURLs(t *testing.T) {
	var queries []string
	var mu sync.Mutex
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(svc.Close)
	dir := catalogBundle(t)
	lock := filepath.Join(t.TempDir(), "catalog.lock.json")
	if _, stderr, code := runKubepact(t, "lock", dir, "-o", lock); code != 0 {
		t.Fatal(stderr)
	}
	moved := catalogBundle(t, [2]string{"      in: header\n      name: X-Catalog-Key", "      in: query\n      name: X-Catalog-Key"})
	serve := []string{moved, "--base-url", svc.URL, "--allow-writes", "--confirm-writes=never", "--auth", "apiKey=k-123"}

	cs, _ := startMCPStdio(t, append(serve, "--tools-lock", lock, "--allow-credentials-in-query")...)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "deleteProduct", Arguments: map[string]any{"productId": "p-0001"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "it now puts a credential in the URL query") {
		t.Errorf("held to the lock: %v %v; want TOOL_WITHHELD DRIFT saying the credential now goes in the query", err, res)
	}

	cs, stderr := startMCPStdio(t, serve...)
	res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "deleteProduct", Arguments: map[string]any{"productId": "p-0001"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "(CREDENTIAL_IN_QUERY)") ||
		!strings.Contains(res.Content[0].(*sdk.TextContent).Text, "--allow-credentials-in-query") {
		t.Errorf("without a lock: %v %v; want TOOL_WITHHELD CREDENTIAL_IN_QUERY naming --allow-credentials-in-query", err, res)
	}
	if !strings.Contains(stderr.String(), "would send a credential in the URL query (--allow-credentials-in-query allows it)") {
		t.Errorf("stderr does not warn:\n%s", stderr)
	}
	mu.Lock()
	if len(queries) != 0 {
		t.Errorf("the service received %d request(s) while the tool was withheld", len(queries))
	}
	mu.Unlock()

	cs, _ = startMCPStdio(t, append(serve, "--allow-credentials-in-query")...)
	res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "deleteProduct", Arguments: map[string]any{"productId": "p-0001"}})
	if err != nil || res.IsError {
		t.Fatalf("with --allow-credentials-in-query: %v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(queries) != 1 || queries[0] != "X-Catalog-Key=k-123" {
		t.Errorf("the service saw queries %q; want the key in the query once", queries)
	}
}

// TestLockToolModeCommand: `kubepact lock --tool-mode` records the mode
// (auto what it settles to); a server in the other mode exits 2 naming
// the flag that serves the recorded one; in that mode it serves.
func TestLockToolModeCommand(t *testing.T) {
	dir := catalogBundle(t)
	lock := filepath.Join(t.TempDir(), "discover.lock.json")
	if _, stderr, code := runKubepact(t, "lock", dir, "--tool-mode", "discover", "-o", lock); code != 0 {
		t.Fatal(stderr)
	}
	raw, err := os.ReadFile(lock)
	if err != nil || !strings.Contains(string(raw), `"toolMode": "discover"`) {
		t.Fatalf("the lock does not record discover (%v):\n%s", err, raw)
	}
	printed, stderr, code := runKubepact(t, "lock", dir, "--tool-mode", "auto", "-o", "-")
	if code != 0 || !strings.Contains(printed, `"toolMode": "all"`) || !strings.Contains(stderr, "--tool-mode auto records all mode for these 7 tool(s)") {
		t.Errorf("lock --tool-mode auto on 7 tools: exit %d, stderr %q, lock has all: %v", code, stderr, strings.Contains(printed, `"toolMode": "all"`))
	}
	_, stderr, code = runKubepact(t, "mcp", dir, "--workspace", t.TempDir(), "--base-url", "http://127.0.0.1:9", "--allow-writes", "--tools-lock", lock)
	if code != 2 || !strings.Contains(stderr, "records tool mode discover") || !strings.Contains(stderr, "--tool-mode discover") {
		t.Errorf("served in all mode under a discover lock: exit %d, stderr %q", code, stderr)
	}
	cs, _ := startMCPStdio(t, dir, "--base-url", "http://127.0.0.1:9", "--allow-writes", "--tools-lock", lock, "--tool-mode", "discover")
	if names := listedTools(t, cs); !slices.Contains(names, "pacto_search_operations") || slices.Contains(names, "getProduct") {
		t.Errorf("served in discover mode under a discover lock: tools %v", names)
	}
}
