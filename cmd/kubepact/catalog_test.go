package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/testregistry"
)

// TestMCPRoot serves `kubepact mcp --root REF --root DIR` to a real client
// over stdio: a root pushed to a registry with the registry flags and a
// local one, combined with the authoring tools; the catalog resource lists
// both roots and the lookup finds the pushed one by its full identity.
func TestMCPRoot(t *testing.T) {
	reg := testregistry.New(t, nil)
	payments := filepath.Join(repoRoot(t), "examples", "bundles", "payments")
	ref := "oci://" + reg.Host + "/examples/payments:3.0.2"
	if _, stderr, code := runKubepact(t, "push", payments, ref, "--plain-http"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	local := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, "mcp", "--root", ref, "--root", local, "--plain-http", "--workspace", t.TempDir())
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "pacto://catalog"})
	if err != nil {
		t.Fatalf("read pacto://catalog: %v\n%s", err, stderr)
	}
	var sum struct {
		Meta struct {
			CatalogID    string `json:"catalogId"`
			Completeness string `json:"completeness"`
		} `json:"meta"`
		Roots []struct {
			Resolved bool `json:"resolved"`
			Revision struct {
				Service struct{ Domain, Name string }   `json:"service"`
				Content struct{ Scheme, Digest string } `json:"content"`
			} `json:"revision"`
		} `json:"roots"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Roots) != 2 || !sum.Roots[0].Resolved || !sum.Roots[1].Resolved || sum.Roots[0].Revision.Content.Scheme != "oci" || sum.Roots[1].Revision.Content.Scheme != "local" {
		t.Fatalf("roots %+v\n%s", sum.Roots, stderr)
	}
	r := sum.Roots[0].Revision
	call, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_catalog_revision", Arguments: map[string]any{
		"name": r.Service.Name, "domain": r.Service.Domain, "scheme": r.Content.Scheme, "digest": r.Content.Digest}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := call.StructuredContent.(map[string]any); call.IsError || out["found"] != true || out["catalogId"] != sum.Meta.CatalogID {
		t.Errorf("lookup of the pushed root: %v", call.StructuredContent)
	}
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_create", Arguments: map[string]any{"name": "x", "dry_run": true}}); err != nil {
		t.Errorf("the authoring tools are served beside the catalog: %v", err)
	}
}

// TestMCPRootRefused: an empty --root, or a bound above its ceiling, stops
// start-up with the flag named.
func TestMCPRootRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--root", ""}, "--root[0] is empty"},
		{[]string{"--root", ".", "--catalog-max-depth", "30"}, "--catalog-max-depth is 30: the ceiling is 25"},
		{[]string{"--families", "catalog"}, "the catalog family needs --root"},
	} {
		_, stderr, code := runKubepact(t, append([]string{"mcp", "--workspace", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
