package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestGeneratedArgumentDepthIsBounded: a recursive schema (a tree of
// nodes) is legitimate, but an argument nested past the bound (100
// and 400 levels; 64 are allowed) is refused before validation on the
// server's decoding path, which keeps the validator's recursion bounded
// (openapitools.TooDeep); a tree of ordinary depth is sent.
func TestGeneratedArgumentDepthIsBounded(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(upstream.Close)
	dir := writeBundle(t, `openapi: 3.0.3
info: {title: trees, version: "1"}
paths:
  /trees:
    post:
      operationId: postTree
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Node'}
      responses: {'200': {description: ok}}
components:
  schemas:
    Node:
      type: object
      properties:
        name: {type: string}
        children: {type: array, items: {$ref: '#/components/schemas/Node'}}
`, nil)
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: upstream.URL, AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	nest := func(levels int) map[string]any {
		var body map[string]any
		raw := strings.Repeat(`{"name":"n","children":[`, levels) + strings.Repeat(`]}`, levels)
		if err := json.Unmarshal([]byte(raw), &body); err != nil {
			t.Fatal(err)
		}
		return map[string]any{"body": body}
	}
	if res := callTool(t, cs, "postTree", nest(20)); res.IsError {
		t.Fatalf("a tree 20 levels deep: %s", text(res))
	}
	for _, levels := range []int{100, 400} {
		res := callTool(t, cs, "postTree", nest(levels))
		if !res.IsError || !strings.Contains(text(res), `argument "body" is nested deeper than 64 levels`) {
			t.Fatalf("a tree %d levels deep: %s; want a tool error naming the depth limit", levels, text(res))
		}
	}
}
