package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestGeneratedResultCarriedOnceWithinTheCap is issue 10, item 7 at the
// MCP layer: 1 MiB of control bytes came back as a 13.6 MB tool result,
// escaped six-fold and carried twice (as JSON text and as
// structuredContent). The body is now in structuredContent only, and the
// whole encoded tool result stays within the cap plus the one-line text.
func TestGeneratedResultCarriedOnceWithinTheCap(t *testing.T) {
	const limit = 256 << 10
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for i := range 200 {
			w.Header().Add("X-Pad", strings.Repeat(string(rune('a'+i%26)), 1000))
		}
		_, _ = w.Write([]byte(strings.Repeat("\x01<", limit)))
	}))
	t.Cleanup(upstream.Close)
	dir := writeBundle(t, `openapi: 3.0.3
info: {title: probe, version: "1"}
paths:
  /dump:
    get:
      operationId: dump
      responses: {'200': {description: ok}}
`, nil)
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: upstream.URL, MaxResponseBytes: limit}, nil)
	cs := connect(t.Context(), t, s)
	res := callTool(t, cs, "dump", map[string]any{})
	whole, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) > limit+1024 {
		t.Errorf("the tool result is %d bytes encoded; the cap is %d", len(whole), limit)
	}
	txt := text(res)
	if strings.Contains(txt, "\\u0001") || len(txt) > 512 {
		t.Errorf("the text content repeats the body (%d bytes): %.200s", len(txt), txt)
	}
	got := structured(t, res)
	body, _ := got["body"].(string)
	if res.IsError || got["truncated"] != true || len(body) < limit/16 || !strings.HasPrefix(body, "\x01<") {
		t.Errorf("isError %v, truncated %v, body %d bytes; want a cut body, not an error", res.IsError, got["truncated"], len(body))
	}
}
