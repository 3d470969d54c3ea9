package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/testregistry"
)

// TestFleetOCISourceUsesRegistryFlags: an --oci fleet source on a
// plain-HTTP registry behind credentials is reached with the same
// --plain-http and --registry-secret-file that every other consumer uses
// (they used to hold only for the authoring tools, and the source showed
// as unavailable with 0 services).
func TestFleetOCISourceUsesRegistryFlags(t *testing.T) {
	reg := testregistry.New(t, &testregistry.Options{Username: "ci", Password: "s3cret"})
	secret := filepath.Join(t.TempDir(), ".dockerconfigjson")
	auth := base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))
	if err := os.WriteFile(secret, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, reg.Host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := "oci://" + reg.Host + "/examples/payments:3.0.2"
	if _, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "payments"), ref, "--plain-http", "--registry-secret-file", secret); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, "mcp", "--families", "", "--fleet", "--oci", ref, "--plain-http", "--registry-secret-file", secret, "--workspace", t.TempDir())
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_search", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out == nil || out["total"] != float64(1) {
		t.Fatalf("pacto_fleet_search over the --oci source: %v\n%s", res.StructuredContent, stderr)
	}
	meta := out["meta"].(map[string]any)
	src := meta["sources"].([]any)[0].(map[string]any)
	if src["id"] != "oci" || src["status"] != "available" || meta["completeness"] != "complete" {
		t.Errorf("the oci source is %v, completeness %v; want available and complete", src, meta["completeness"])
	}
}
