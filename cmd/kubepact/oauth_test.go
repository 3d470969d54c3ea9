//go:build !sidecaronly

package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/oidcprovider"
)

// TestOAuthFlagsRefused: --mcp-auth oauth and the --oauth-* flags on the
// three HTTP shapes: what cannot work is refused at once (exit 2), naming
// the flag and what is accepted.
func TestOAuthFlagsRefused(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	sidecar := []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--health-addr", "127.0.0.1:0", "--port", "0"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"mcp: oauth without an issuer", []string{"mcp", "-t", "http", "--mcp-auth", "oauth"}, "--oauth-issuer: is required"},
		{"mcp: an issuer without oauth", []string{"mcp", "-t", "http", "--oauth-issuer", "https://issuer.example.com"},
			"--oauth-issuer configures --mcp-auth oauth, and this server does not authenticate with OAuth: add --mcp-auth oauth, or drop --oauth-issuer"},
		{"mcp: --mcp-auth on stdio", []string{"mcp", "--mcp-auth", "oauth"}, "--mcp-auth applies to the HTTP transport"},
		{"mcp: an unknown mode", []string{"mcp", "-t", "http", "--mcp-auth", "oidc"}, `--mcp-auth "oidc" is not accepted; use none, token or oauth`},
		{"mcp: oauth with a token file", []string{"mcp", "-t", "http", "--mcp-auth", "oauth", "--auth-token-file", "/dev/null", "--oauth-issuer", "https://issuer.example.com"},
			"--auth-token-file is the token of --mcp-auth token, not of --mcp-auth oauth"},
		{"mcp: an http issuer beyond loopback", []string{"mcp", "-t", "http", "--mcp-auth", "oauth", "--oauth-issuer", "http://issuer.example.com"},
			`--oauth-issuer: "http://issuer.example.com": want https (http only on a loopback address)`},
		{"mcp: beyond loopback without a resource", []string{"mcp", "-t", "http", "--listen", "0.0.0.0", "--mcp-auth", "oauth", "--oauth-issuer", "https://issuer.example.com"},
			"--oauth-resource is required with --listen 0.0.0.0"},
		{"sidecar: oauth without an issuer", append(sidecar, "--mcp-auth", "oauth"), "--oauth-issuer: is required"},
		{"sidecar: a scope without oauth", append(sidecar, "--oauth-write-scope", "w"), "--oauth-write-scope configures --mcp-auth oauth"},
		{"operator: oauth without an issuer", []string{"operator", "--mcp-auth", "oauth"}, "--oauth-issuer: is required"},
		{"operator: an issuer in kubernetes mode", []string{"operator", "--oauth-issuer", "https://issuer.example.com"}, "--oauth-issuer configures --mcp-auth oauth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "mcp" {
				args = append(args, "--workspace", t.TempDir())
			}
			stderr, code := runRefused(t, args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestSidecarOAuth: `kubepact sidecar --mcp-auth oauth` serves its
// protected-resource metadata, answers a request without a token 401
// naming it, and serves its generated tools to a token of the loopback
// OpenID provider.
func TestSidecarOAuth(t *testing.T) {
	upstream := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(upstream.Close)
	p := oidcprovider.Start(t, oidcprovider.Client{ID: "agent", Secret: "s"})
	sc := startSidecar(t, upstream.URL, "--mcp-auth", "oauth", "--oauth-issuer", p.Issuer)
	metadata := strings.TrimSuffix(sc.mcpURL, mcp.Endpoint) + mcp.ProtectedResourceMetadataPath + mcp.Endpoint

	resp, err := http.Get(metadata)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d", metadata, resp.StatusCode)
	}
	resp, err = http.Post(sc.mcpURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if want := `Bearer resource_metadata="` + metadata + `"`; resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), want) {
		t.Errorf("POST without a token: %d %q; want 401 %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}

	p.SetAudience(sc.mcpURL) // the sidecar's default resource
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "oauth", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: sc.mcpURL, HTTPClient: &http.Client{Transport: bearerTransport{p.Token(t, "agent", "mcp:read")}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 1}})
	if err != nil || res.IsError {
		t.Errorf("listProducts with the provider's token: %v %+v", err, res)
	}
}
