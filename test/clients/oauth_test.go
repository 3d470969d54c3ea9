package clients

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/test/gobuild"
	"github.com/kubepact/kubepact/test/oidcprovider"
)

// oauthConfig is a plan configuration with the headers the harness sends
// on every HTTP request.
type oauthConfig struct {
	config
	Headers map[string]string `json:"headers"`
}

// TestTypeScriptClientOAuth: the official TypeScript client, with a bearer
// token from a real OpenID provider's token endpoint (test/oidcprovider on
// loopback), against `kubepact mcp -t http --mcp-auth oauth`: a read token
// lists every tool and calls a read-only one, and gets INSUFFICIENT_SCOPE
// from pacto_create; a write token creates a contract.
func TestTypeScriptClientOAuth(t *testing.T) {
	clientsDir := os.Getenv(ClientsDirEnv)
	if clientsDir == "" {
		t.Skip("the TypeScript client harness needs the packages `make test` installs: run `make test` (or set " + ClientsDirEnv + ")")
	}
	kubepactBin := filepath.Join(t.TempDir(), "kubepact")
	if out, err := gobuild.Command("", kubepactBin, "../../cmd/kubepact").CombinedOutput(); err != nil {
		t.Fatalf("building kubepact: %v\n%s", err, out)
	}
	p := oidcprovider.Start(t,
		oidcprovider.Client{ID: "reader", Secret: "r", Subject: "alice"},
		oidcprovider.Client{ID: "writer", Secret: "w", Subject: "bob"})
	env := map[string]string{"HOME": t.TempDir(), "KUBEPACT_CACHE_DIR": t.TempDir(), "PATH": os.Getenv("PATH")}
	workspace := t.TempDir()
	url := startHTTP(t, kubepactBin, shipped{name: "authoring/oauth", args: []string{"--mcp-auth", "oauth", "--oauth-issuer", p.Issuer}}, env, workspace)
	p.SetAudience(url) // the default resource: http://127.0.0.1:PORT/mcp

	plan := map[string]any{"configs": []oauthConfig{
		{config: config{Name: "authoring/oauth read token", Transport: "http", URL: url, Calls: []call{
			{Tool: "pacto_server_info", Args: map[string]any{}, Expect: "ok"},
			{Tool: "pacto_create", Args: map[string]any{"name": "orders", "path": "orders"}, Expect: "toolError", Code: "INSUFFICIENT_SCOPE"},
		}}, Headers: map[string]string{"Authorization": "Bearer " + p.Token(t, "reader", "mcp:read")}},
		{config: config{Name: "authoring/oauth write token", Transport: "http", URL: url, Calls: []call{
			{Tool: "pacto_create", Args: map[string]any{"name": "orders", "path": "orders"}, Expect: "ok"},
		}}, Headers: map[string]string{"Authorization": "Bearer " + p.Token(t, "writer", "mcp:read", "mcp:write")}},
	}}
	runHarness(t, clientsDir, plan)
	if _, err := os.Stat(filepath.Join(workspace, "orders", "pacto.yaml")); err != nil {
		t.Errorf("the write token's pacto_create: %v", err)
	}
}
