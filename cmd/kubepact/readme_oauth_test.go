//go:build !sidecaronly

package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/oidcprovider"
)

// TestReadmeOAuthLines runs the README's "OAuth" block: the server line
// with its issuer, https://issuer.example.com, filled with a real OpenID
// provider on loopback (test/oidcprovider) and its port 8585 with a free
// one (in every line); then both curl lines, verbatim otherwise: the
// metadata names the resource and the issuer, and the POST without a token
// is a 401 naming the metadata. A token from the provider's token endpoint
// then reaches the tools over the go-sdk client.
func TestReadmeOAuthLines(t *testing.T) {
	lines := readmeCommands(t, "oauth")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "kubepact mcp -t http --port 8585 --mcp-auth oauth --oauth-issuer https://issuer.example.com") ||
		!strings.HasPrefix(lines[1], "curl ") || !strings.HasPrefix(lines[2], "curl ") {
		t.Fatalf("the README's oauth block is %q; want the server line and two curl lines", lines)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the README's curl lines cannot run")
	}
	p := oidcprovider.Start(t, oidcprovider.Client{ID: "agent", Secret: "s"})
	port := strconv.Itoa(freeport.Port(t))
	fill := func(l string) string {
		return strings.ReplaceAll(strings.Replace(l, "https://issuer.example.com", p.Issuer, 1), "8585", port)
	}
	env, _ := readmeEnv(t)
	work := t.TempDir()
	server := readmeLine(t.Context(), work, env, fill(lines[0]))
	var stderr syncBuffer
	server.Stderr = &stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	resource := "http://127.0.0.1:" + port + mcp.Endpoint
	metadata := "http://127.0.0.1:" + port + mcp.ProtectedResourceMetadataPath + mcp.Endpoint
	for i := 0; ; i++ { // until it listens
		resp, err := http.Get(metadata)
		if err == nil {
			_ = resp.Body.Close()
			break
		}
		if i == 600 {
			t.Fatalf("%s did not serve: %v\n%s", lines[0], err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	out, err := readmeLine(t.Context(), work, env, fill(lines[1])).Output()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
	}
	if err != nil || json.Unmarshal(out, &meta) != nil || meta.Resource != resource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != p.Issuer ||
		strings.Join(meta.Scopes, " ") != "mcp:read mcp:write" {
		t.Errorf("%s: %v %s; want the metadata of %s naming %s", lines[1], err, out, resource, p.Issuer)
	}
	out, err = readmeLine(t.Context(), work, env, fill(lines[2])).Output()
	if err != nil || !strings.Contains(string(out), " 401 ") || !strings.Contains(string(out), `Www-Authenticate: Bearer resource_metadata="`+metadata+`"`) {
		t.Errorf("%s: %v\n%s\nwant a 401 naming %s", lines[2], err, out, metadata)
	}

	p.SetAudience(resource)
	tok := p.Token(t, "agent", "mcp:read")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "readme", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: resource, HTTPClient: &http.Client{Transport: bearerTransport{tok}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect with the provider's token: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	if info := serverInfo(t, cs); info["tools"] == nil {
		t.Errorf("pacto_server_info with the provider's token: %v", info)
	}
}
