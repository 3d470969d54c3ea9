package clients

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/test/gobuild"
	"github.com/kubepact/kubepact/test/oidcprovider"
)

// TestTypeScriptClientOAuth: the official TypeScript clients (1.x, and 2.x
// in both eras), with a bearer
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

	// Each client and era creates its own contract: a second pacto_create
	// of one path would be refused.
	configs := func(dir string) []config {
		return []config{
			{Name: "authoring/oauth read token", Transport: "http", URL: url, Calls: []call{
				{Tool: "pacto_server_info", Args: map[string]any{}, Expect: "ok"},
				{Tool: "pacto_create", Args: map[string]any{"name": "orders", "path": dir}, Expect: "toolError", Code: "INSUFFICIENT_SCOPE"},
			}, Headers: map[string]string{"Authorization": "Bearer " + p.Token(t, "reader", "mcp:read")}},
			{Name: "authoring/oauth write token", Transport: "http", URL: url, Calls: []call{
				{Tool: "pacto_create", Args: map[string]any{"name": "orders", "path": dir}, Expect: "ok"},
			}, Headers: map[string]string{"Authorization": "Bearer " + p.Token(t, "writer", "mcp:read", "mcp:write")}},
		}
	}
	runHarness(t, clientsDir, "sdk", withEra(configs("orders-sdk"), eraLegacy))
	runHarness(t, clientsDir, "client", concat(withEra(configs("orders-legacy"), eraLegacy), withEra(configs("orders-stateless"), eraStateless)))
	for _, dir := range []string{"orders-sdk", "orders-legacy", "orders-stateless"} {
		if _, err := os.Stat(filepath.Join(workspace, dir, "pacto.yaml")); err != nil {
			t.Errorf("the write token's pacto_create (%s): %v", dir, err)
		}
	}
}
