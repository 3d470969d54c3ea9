//go:build !sidecaronly

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/freeport"
)

// TestMCPHTTPMetrics: `kubepact mcp -t http` serves Prometheus metrics at
// /metrics on its own listener, behind what guards /mcp: a caller without
// the bearer token gets 401, a DNS-rebinding Host 403; with the token, the
// per-tool series count the calls an MCP client made.
func TestMCPHTTPMetrics(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freeport.Port(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	p := &sidecarProc{mcpURL: base + "/mcp"}
	p.launch(t, []string{"mcp", "-t", "http", "--port", strconv.Itoa(port), "--workspace", t.TempDir(), "--auth-token-file", token},
		"kubepact mcp listening", func() bool {
			resp, err := http.Get(base + "/metrics")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "metrics-test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: p.mcpURL, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{token: "s3cret"}}}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, p.stderr)
	}
	defer cs.Close()
	for range 2 {
		if res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_schema", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("pacto_schema: %v %+v", err, res)
		}
	}
	if res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_schema", Arguments: map[string]any{"nope": 1}}); err != nil || !res.IsError {
		t.Fatalf("pacto_schema with an unknown argument: %v %+v", err, res)
	}

	get := func(host, bearer string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get("", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	if code, _ := get("attacker.example:80", "s3cret"); code != http.StatusForbidden {
		t.Errorf("/metrics with a foreign Host: %d, want 403", code)
	}
	code, body := get("", "s3cret")
	if code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d\n%s", code, body)
	}
	if v := metricValue(body, `kubepact_mcp_tool_calls_total{outcome="ok",tool="pacto_schema"}`); v != 2 {
		t.Errorf("ok pacto_schema calls = %v, want 2\n%s", v, body)
	}
	if v := metricValue(body, `kubepact_mcp_tool_calls_total{outcome="tool_error",tool="pacto_schema"}`); v != 1 {
		t.Errorf("refused pacto_schema calls = %v, want 1", v)
	}
	for _, want := range []string{`kubepact_mcp_tool_call_duration_seconds_count{tool="pacto_schema"} 3`, "go_goroutines ", "process_resident_memory_bytes "} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
