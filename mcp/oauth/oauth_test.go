package oauth_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/oauth"
	"github.com/kubepact/kubepact/test/oidcprovider"
)

// served is a kubepact MCP server over HTTP on loopback whose tokens an
// oauth.Verifier checks.
type served struct {
	url       string // the endpoint, also the resource
	workspace string
}

// serve starts the server; opts fills the Verifier's options beyond
// Issuer and Resource (nil: the defaults).
func serve(t *testing.T, issuer string, opts *oauth.Options) served {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + mcp.Endpoint
	o := oauth.Options{}
	if opts != nil {
		o = *opts
	}
	o.Issuer, o.Resource = issuer, resource
	v, err := oauth.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	srv, err := mcp.NewServer(t.Context(), &mcp.Options{
		Transport: mcp.TransportHTTP, Workspace: ws,
		HTTPOptions: mcp.HTTPOptions{Authenticator: v, ProtectedResource: v.ProtectedResource()},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return served{url: resource, workspace: ws}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, url, token, era string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "oauth-test", Version: "v0"}, nil).Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect (%s): %v", era, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// answer is one raw HTTP answer to a tools/list.
type answer struct {
	status    int
	challenge string
	body      string
}

func post(t *testing.T, url, authorization string) answer {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)}
}

func metadataURL(s served) string {
	return strings.TrimSuffix(s.url, mcp.Endpoint) + mcp.ProtectedResourceMetadataPath + mcp.Endpoint
}

// TestOAuthResourceServer: tokens from a real OpenID provider's token
// endpoint (zitadel's pkg/op on loopback) over the go-sdk client in both
// protocol eras: a read token lists and calls read-only tools and gets
// INSUFFICIENT_SCOPE, with nothing written, from a tool that writes; a
// write token writes. The metadata is served at both well-known paths,
// and every 401 names it.
func TestOAuthResourceServer(t *testing.T) {
	p := oidcprovider.Start(t,
		oidcprovider.Client{ID: "reader", Secret: "r-secret", Subject: "alice", Groups: []string{"team-a", "system:masters"}},
		oidcprovider.Client{ID: "writer", Secret: "w-secret", Subject: "bob"})
	s := serve(t, p.Issuer, nil)
	p.SetAudience(s.url) // each client's tokens are for this resource

	readTok := p.Token(t, "reader", "mcp:read")
	writeTok := p.Token(t, "writer", "mcp:read", "mcp:write")
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		reader := connect(t, s.url, readTok, era)
		tools, err := reader.ListTools(t.Context(), nil)
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("%s: reader lists tools: %v (%d tools)", era, err, len(tools.Tools))
		}
		res, err := reader.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: reader calls a read-only tool: %v %v", era, err, text(res))
		}
		res, err = reader.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_create", Arguments: map[string]any{"name": "orders", "path": "orders-" + era}})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !res.IsError || !strings.Contains(got, "INSUFFICIENT_SCOPE") || !strings.Contains(got, "mcp:write") {
			t.Errorf("%s: reader calls pacto_create: %s; want INSUFFICIENT_SCOPE naming mcp:write", era, got)
		}
		if _, err := os.Stat(filepath.Join(s.workspace, "orders-"+era)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused pacto_create wrote %s (%v)", era, "orders-"+era, err)
		}
		writer := connect(t, s.url, writeTok, era)
		res, err = writer.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_create", Arguments: map[string]any{"name": "orders", "path": "orders-" + era}})
		if err != nil || res.IsError {
			t.Fatalf("%s: writer calls pacto_create: %v %s", era, err, text(res))
		}
		if _, err := os.Stat(filepath.Join(s.workspace, "orders-"+era, "pacto.yaml")); err != nil {
			t.Errorf("%s: writer's pacto_create: %v", era, err)
		}
	}

	// RFC 9728 metadata, at the root and path-suffixed forms, to anyone.
	for _, u := range []string{metadataURL(s), strings.TrimSuffix(s.url, mcp.Endpoint) + mcp.ProtectedResourceMetadataPath} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		err = json.NewDecoder(resp.Body).Decode(&meta)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
		}
		want := map[string]any{"resource": s.url, "authorization_servers": []any{p.Issuer}, "scopes_supported": []any{"mcp:read", "mcp:write"}, "bearer_methods_supported": []any{"header"}}
		for k, v := range want {
			if got, _ := json.Marshal(meta[k]); string(got) != mustJSON(v) {
				t.Errorf("GET %s: %s = %s, want %s", u, k, got, mustJSON(v))
			}
		}
	}

	// No token: 401 naming the metadata.
	got := post(t, s.url, "")
	if got.status != http.StatusUnauthorized || got.challenge != `Bearer resource_metadata="`+metadataURL(s)+`", scope="mcp:read mcp:write"` {
		t.Errorf("no token: %d %q", got.status, got.challenge)
	}
	// A token without the read scope: 403 insufficient_scope.
	got = post(t, s.url, "Bearer "+p.Token(t, "writer", "openid"))
	if got.status != http.StatusForbidden || got.challenge != `Bearer resource_metadata="`+metadataURL(s)+`", error="insufficient_scope", scope="mcp:read"` {
		t.Errorf("token without mcp:read: %d %q %s", got.status, got.challenge, got.body)
	}
}

func text(res *sdk.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOAuthHostileTokens: every token that is not this resource's is
// refused 401 with error="invalid_token", the metadata URL and the reason,
// before MCP sees the request.
func TestOAuthHostileTokens(t *testing.T) {
	p := oidcprovider.Start(t,
		oidcprovider.Client{ID: "good", Secret: "s"},
		oidcprovider.Client{ID: "expired", Secret: "s", Lifetime: -2 * time.Minute},
		oidcprovider.Client{ID: "other", Secret: "s", Audience: []string{"https://other.example.com/mcp"}},
		oidcprovider.Client{ID: "sa", Secret: "s", Subject: "system:serviceaccount:kube-system:admin"})
	other := oidcprovider.Start(t, oidcprovider.Client{ID: "good", Secret: "s"})
	s := serve(t, p.Issuer, nil)
	p.SetAudience(s.url, "good", "expired", "sa")
	other.SetAudience(s.url)

	good := p.Token(t, "good", "mcp:read", "mcp:write")
	if got := post(t, s.url, "Bearer "+good); got.status != http.StatusOK {
		t.Fatalf("the good token: %d %s", got.status, got.body)
	}
	parts := strings.Split(good, ".")
	enc := base64.RawURLEncoding
	var header map[string]any
	raw, _ := enc.DecodeString(parts[0])
	_ = json.Unmarshal(raw, &header)
	hsHeader := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT","kid":"` + header["kid"].(string) + `"}`))
	mac := hmac.New(sha256.New, []byte(p.PublicKeyPEM(t)))
	mac.Write([]byte(hsHeader + "." + parts[1]))
	hs256 := hsHeader + "." + parts[1] + "." + enc.EncodeToString(mac.Sum(nil))
	var claims map[string]any
	raw, _ = enc.DecodeString(parts[1])
	_ = json.Unmarshal(raw, &claims)
	claims["sub"] = "mallory"
	forged, _ := json.Marshal(claims)

	for _, tc := range []struct {
		name, token, reason string
	}{
		{"malformed", "not-a-jwt", "not a JWT"},
		{"alg none", enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".", `"none"`},
		{"HS256 with the public key as secret", hs256, `"HS256"`},
		{"claims changed after signing", parts[0] + "." + enc.EncodeToString(forged) + "." + parts[2], "signature does not verify"},
		{"expired", p.Token(t, "expired", "mcp:read"), "expired at"},
		{"for another resource, replayed here", p.Token(t, "other", "mcp:read"), "is for https://other.example.com/mcp, not for this resource"},
		{"another issuer's key", other.Token(t, "good", "mcp:read"), "key the issuer " + p.Issuer + " does not publish"},
		{"huge", strings.Repeat("a", 64<<10), "at most 16384"},
		{"a ServiceAccount as its user", p.Token(t, "sa", "mcp:read"), "system: namespace Kubernetes reserves"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := post(t, s.url, "Bearer "+tc.token)
			want := `Bearer resource_metadata="` + metadataURL(s) + `", error="invalid_token"`
			if got.status != http.StatusUnauthorized || got.challenge != want || !strings.Contains(got.body, tc.reason) || strings.Contains(got.body, "oidc:") {
				t.Errorf("got %d %q %q; want 401 %q saying %q", got.status, got.challenge, got.body, want, tc.reason)
			}
		})
	}
}

// TestOAuthKeyRotation: the provider rotates its signing key; without a
// restart, tokens of the new key are accepted (the unknown kid fetches the
// keys again) and tokens of the old one are refused from then on. Keys
// older than KeysMaxAge are fetched again even when no new key was seen.
func TestOAuthKeyRotation(t *testing.T) {
	p := oidcprovider.Start(t, oidcprovider.Client{ID: "c", Secret: "s"})
	s := serve(t, p.Issuer, &oauth.Options{RefetchInterval: time.Nanosecond, KeysMaxAge: time.Hour})
	p.SetAudience(s.url)
	old := p.Token(t, "c", "mcp:read")
	if got := post(t, s.url, "Bearer "+old); got.status != http.StatusOK {
		t.Fatalf("before the rotation: %d %s", got.status, got.body)
	}
	p.Rotate(t)
	fresh := p.Token(t, "c", "mcp:read")
	if got := post(t, s.url, "Bearer "+fresh); got.status != http.StatusOK {
		t.Errorf("a new key's token after the rotation: %d %s", got.status, got.body)
	}
	if got := post(t, s.url, "Bearer "+old); got.status != http.StatusUnauthorized || !strings.Contains(got.body, "does not publish") {
		t.Errorf("the old key's token after the rotation: %d %s", got.status, got.body)
	}

	// Without a token of the new key: the keys age out.
	p2 := oidcprovider.Start(t, oidcprovider.Client{ID: "c", Secret: "s"})
	s2 := serve(t, p2.Issuer, &oauth.Options{RefetchInterval: time.Nanosecond, KeysMaxAge: 100 * time.Millisecond})
	p2.SetAudience(s2.url)
	old = p2.Token(t, "c", "mcp:read")
	if got := post(t, s2.url, "Bearer "+old); got.status != http.StatusOK {
		t.Fatalf("before the rotation: %d %s", got.status, got.body)
	}
	p2.Rotate(t)
	time.Sleep(150 * time.Millisecond) // past KeysMaxAge: no wall-clock figure is asserted
	if got := post(t, s2.url, "Bearer "+old); got.status != http.StatusUnauthorized {
		t.Errorf("the old key's token once the keys aged out: %d %s", got.status, got.body)
	}
}

// TestOAuthHostileIssuer: an issuer that stalls, answers garbage or too
// much, names another issuer, or is not there makes requests fail 503 at
// once with the reason, within FetchTimeout; the server keeps serving.
func TestOAuthHostileIssuer(t *testing.T) {
	p := oidcprovider.Start(t, oidcprovider.Client{ID: "c", Secret: "s"})
	stop := make(chan struct{})
	var hostile *httptest.Server
	hostile = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		issuer := hostile.URL + "/" + mode
		switch {
		case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") && mode == "liar":
			_, _ = io.WriteString(w, `{"issuer":"https://elsewhere.example.com","jwks_uri":"`+issuer+`/keys"}`)
		case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") && mode == "remote-keys":
			_, _ = io.WriteString(w, `{"issuer":"`+issuer+`","jwks_uri":"http://192.0.2.1/keys"}`)
		case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
			_, _ = io.WriteString(w, `{"issuer":"`+issuer+`","jwks_uri":"`+issuer+`/keys"}`)
		case mode == "stall":
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		case mode == "garbage":
			_, _ = io.WriteString(w, "<html>not keys</html>")
		case mode == "huge":
			_, _ = io.WriteString(w, `{"keys":[`+strings.Repeat(" ", 2<<20)+`]}`)
		}
	}))
	t.Cleanup(func() { close(stop); hostile.Close() })
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	for _, tc := range []struct{ name, issuer, reason string }{
		{"stalls", hostile.URL + "/stall", "did not answer within 300ms"},
		{"garbage", hostile.URL + "/garbage", "did not answer a JSON document"},
		{"huge", hostile.URL + "/huge", "more than 1048576 bytes"},
		{"names another issuer", hostile.URL + "/liar", `names the issuer "https://elsewhere.example.com"`},
		{"keys beyond loopback over http", hostile.URL + "/remote-keys", "want https"},
		{"unreachable", gone.URL, "could not be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, tc.issuer, &oauth.Options{FetchTimeout: 300 * time.Millisecond})
			p.SetAudience(s.url)
			tok := p.Token(t, "c", "mcp:read")
			for range 2 { // the second answer comes from the remembered failure
				got := post(t, s.url, "Bearer "+tok)
				if got.status != http.StatusServiceUnavailable || !strings.Contains(got.body, tc.reason) {
					t.Errorf("got %d %q; want 503 saying %q", got.status, got.body, tc.reason)
				}
			}
			// The metadata does not depend on the issuer.
			resp, err := http.Get(metadataURL(s))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("metadata while the issuer is down: %v %v", err, resp)
			}
			if resp != nil {
				_ = resp.Body.Close()
			}
		})
	}
}

// TestOAuthOptions: options that cannot work are refused before anything
// is fetched, naming the flag and what is accepted.
func TestOAuthOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    oauth.Options
		want string
	}{
		{"no issuer", oauth.Options{Resource: "https://k.example.com/mcp"}, "--oauth-issuer: is required"},
		{"http issuer beyond loopback", oauth.Options{Issuer: "http://issuer.example.com", Resource: "https://k.example.com/mcp"}, "--oauth-issuer: \"http://issuer.example.com\": want https (http only on a loopback address)"},
		{"issuer with credentials", oauth.Options{Issuer: "https://u:p@issuer.example.com", Resource: "https://k.example.com/mcp"}, "credentials"},
		{"relative resource", oauth.Options{Issuer: "https://issuer.example.com", Resource: "/mcp"}, "--oauth-resource: \"/mcp\": want this server's absolute http(s) URL"},
		{"scope with a space", oauth.Options{Issuer: "https://issuer.example.com", Resource: "https://k.example.com/mcp", WriteScope: "a b"}, "--oauth-write-scope: \"a b\": a scope is one word"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oauth.New(&tc.o)
			var fe *oauth.FieldError
			if !errors.As(err, &fe) || fe.Named(oauth.FlagNames) != tc.want && !strings.Contains(fe.Named(oauth.FlagNames), tc.want) {
				t.Errorf("got %v; want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestOAuthUnknownKeyFlood: tokens naming keys the provider does not
// publish, presented as fast as the client can, fetch the provider's keys
// at most once per RefetchInterval: a caller cannot make the server hammer
// its provider.
func TestOAuthUnknownKeyFlood(t *testing.T) {
	p := oidcprovider.Start(t, oidcprovider.Client{ID: "c", Secret: "s"})
	other := oidcprovider.Start(t, oidcprovider.Client{ID: "c", Secret: "s"})
	s := serve(t, p.Issuer, &oauth.Options{RefetchInterval: time.Hour})
	p.SetAudience(s.url)
	other.SetAudience(s.url)
	if got := post(t, s.url, "Bearer "+p.Token(t, "c", "mcp:read")); got.status != http.StatusOK {
		t.Fatalf("a good token: %d %s", got.status, got.body)
	}
	before := p.KeyFetches()
	var tokens []string
	for range 5 {
		other.Rotate(t) // a new kid each time
		tokens = append(tokens, other.Token(t, "c", "mcp:read"))
	}
	for i := range 200 {
		if got := post(t, s.url, "Bearer "+tokens[i%len(tokens)]); got.status != http.StatusUnauthorized {
			t.Fatalf("token %d of unknown keys: %d %s", i, got.status, got.body)
		}
	}
	if n := p.KeyFetches() - before; n > 1 {
		t.Errorf("200 tokens of 5 unknown keys fetched the provider's keys %d times; want at most 1 within the refetch interval", n)
	}
}

// BenchmarkAuthenticate: the cost of checking a token once the keys are
// held (an RS256 verification and the claims), beside refusing one that
// is too large (no decoding at all) and one of an unknown key.
func BenchmarkAuthenticate(b *testing.B) {
	p := oidcprovider.Start(b, oidcprovider.Client{ID: "c", Secret: "s"})
	other := oidcprovider.Start(b, oidcprovider.Client{ID: "c", Secret: "s"})
	const resource = "https://kubepact.example.com/mcp"
	p.SetAudience(resource)
	other.SetAudience(resource)
	v, err := oauth.New(&oauth.Options{Issuer: p.Issuer, Resource: resource, RefetchInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	good, unknown := p.Token(b, "c", "mcp:read"), other.Token(b, "c", "mcp:read")
	huge := strings.Repeat("a", 64<<10)
	if _, err := v.Authenticate(b.Context(), good); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, token string }{{"valid", good}, {"unknownKey", unknown}, {"huge", huge}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = v.Authenticate(b.Context(), bc.token)
			}
		})
	}
}
