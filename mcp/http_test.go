package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP runs s.Serve on a loopback listener for the test's lifetime and
// returns the endpoint URL. The cleanup checks that shutdown is graceful.
func serveHTTP(t testing.TB, s *Server) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve after shutdown: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return "http://" + ln.Addr().String() + Endpoint
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func httpClient(ctx context.Context, t testing.TB, url, version string, hc *http.Client) (*sdk.ClientSession, error) {
	t.Helper()
	if hc == nil {
		hc = &http.Client{}
	}
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTPBothProtocolEras(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)

	tests := []struct {
		name        string
		version     string
		wantVersion string
		wantSession bool
	}{
		{"2025-11-25 client gets a session", "2025-11-25", "2025-11-25", true},
		{"2026-07-28 client is served statelessly", "2026-07-28", "2026-07-28", false},
		{"default client negotiates the newest era", "", "2026-07-28", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := httpClient(t.Context(), t, url, tc.version, nil)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != tc.wantVersion {
				t.Errorf("negotiated %q, want %q", got, tc.wantVersion)
			}
			if got := cs.ID() != ""; got != tc.wantSession {
				t.Errorf("has session id = %v (%q), want %v", got, cs.ID(), tc.wantSession)
			}
			if !strings.Contains(cs.InitializeResult().Instructions, "kubepact") {
				t.Errorf("instructions missing: %q", cs.InitializeResult().Instructions)
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("CallTool: err=%v result=%v", err, res)
			}
			if got := structured(t, res)["transport"].(map[string]any)["url"]; got != url {
				t.Errorf("pacto_server_info transport.url = %v, want %v", got, url)
			}
		})
	}
}

// rawRequest sends one MCP-shaped POST with the given headers.
func rawRequest(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestHTTPHardening(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := serveHTTP(t, newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{AllowedHosts: []string{"mcp.example.internal"}}}))
	authed := serveHTTP(t, newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{AuthTokenFile: tokenFile}}))

	tests := []struct {
		name       string
		url        string
		hdr        map[string]string
		wantStatus int
		wantAuthn  string // WWW-Authenticate prefix, if any
	}{
		{"loopback host", open, nil, http.StatusOK, ""},
		{"localhost host with port", open, map[string]string{"Host": "localhost:1234"}, http.StatusOK, ""},
		{"rebinding host", open, map[string]string{"Host": "evil.example"}, http.StatusForbidden, ""},
		{"allow-listed host", open, map[string]string{"Host": "mcp.example.internal:8585"}, http.StatusOK, ""},
		{"foreign origin", open, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden, ""},
		{"null origin", open, map[string]string{"Origin": "null"}, http.StatusForbidden, ""},
		{"loopback origin", open, map[string]string{"Origin": "http://localhost:6274"}, http.StatusOK, ""},
		{"other path", strings.TrimSuffix(open, Endpoint) + "/other", nil, http.StatusNotFound, ""},
		{"sub path", open + "/x", nil, http.StatusNotFound, ""},
		{"no token", authed, nil, http.StatusUnauthorized, `Bearer realm="kubepact"`},
		{"wrong token", authed, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized, `Bearer realm="kubepact", error="invalid_token"`},
		{"wrong scheme", authed, map[string]string{"Authorization": "Basic czNjcmV0LXRva2Vu"}, http.StatusUnauthorized, `Bearer`},
		{"right token", authed, map[string]string{"Authorization": "Bearer s3cret-token"}, http.StatusOK, ""},
		{"right token, rebinding host", authed, map[string]string{"Authorization": "Bearer s3cret-token", "Host": "evil.example"}, http.StatusForbidden, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawRequest(t, tc.url, tc.hdr)
			defer resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, tc.wantAuthn) || (tc.wantAuthn == "") != (got == "") {
				t.Errorf("WWW-Authenticate = %q, want prefix %q", got, tc.wantAuthn)
			}
		})
	}

	t.Run("bearer client end to end", func(t *testing.T) {
		hc := &http.Client{Transport: bearer{token: "s3cret-token", next: http.DefaultTransport}}
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			cs, err := httpClient(t.Context(), t, authed, version, hc)
			if err != nil {
				t.Fatalf("%s: Connect with token: %v", version, err)
			}
			if res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Errorf("%s: CallTool with token: err=%v", version, err)
			}
		}
		if _, err := httpClient(t.Context(), t, authed, "2025-11-25", nil); err == nil {
			t.Error("Connect without token succeeded")
		}
	})

	t.Run("body limit", func(t *testing.T) {
		small := serveHTTP(t, newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxRequestBytes: 512}}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, small, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 2048)+`"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status = %d, want 413", resp.StatusCode)
		}
	})
}

// TestHTTPResponseFraming: a call of the stateless era is answered with
// one application/json body, and a call on a 2025-era session with an
// event stream, which is what carries a confirmation's elicitation/create
// to the client during the call.
func TestHTTPResponseFraming(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, &Options{Transport: TransportHTTP}))
	post := func(t *testing.T, sessionID, version, body string) (contentType, answer string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", version)
		if sessionID != "" {
			req.Header.Set(sessionHeader, sessionID)
		}
		if version == statelessEra {
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "pacto_server_info")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, raw)
		}
		return resp.Header.Get("Content-Type"), string(raw)
	}
	call := func(meta string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{}` + meta + `}}`
	}

	t.Run("stateless", func(t *testing.T) {
		ct, body := post(t, "", statelessEra, call(statelessMeta))
		if ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.ID != 7 || len(resp.Result) == 0 {
			t.Errorf("answer is not the call's JSON-RPC response (%v):\n%s", err, body)
		}
	})
	t.Run("session", func(t *testing.T) {
		id := rawSession(t, url)
		ct, body := post(t, id, "2025-11-25", call(""))
		if !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Content-Type = %q, want text/event-stream", ct)
		}
		if !strings.Contains(body, `"id":7`) || !strings.Contains(body, `"result"`) {
			t.Errorf("the stream lacks the call's response:\n%s", body)
		}
	})
}

func TestHTTPSessionTimeout(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{SessionTimeout: 200 * time.Millisecond}})
	url := serveHTTP(t, s)
	cs, err := httpClient(t.Context(), t, url, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}}); err == nil {
		t.Error("call on an idle-expired session succeeded")
	}
}

func TestServeBeyondLoopbackWarns(t *testing.T) {
	logs := &logSink{}
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{Listen: "0.0.0.0", AllowUnauthenticatedRemote: true}, Logger: logs.logger()})
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen beyond loopback here: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if got := logs.matching("without authentication"); len(got) != 1 {
		t.Errorf("warning lines = %q, want one", got)
	}
}
