package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// BenchmarkGetProductAllocs is the allocation side of TestSidecarVsFloor
// (cmd/kubepact): one getProduct call of the catalog example over loopback
// Streamable HTTP, in one process, to (floor) a go-sdk server whose tool
// does the same GET as test/sidecarfloor, and (kubepact) the sidecar's
// handler. allocs/op and B/op count the client, the demo service and the
// server together; the client and the demo service are the same on both
// lines, so the difference between the lines is what kubepact's server
// allocates above the floor's per call. floor-stateless is the floor's
// server on the go-sdk's stateless path, as kubepact serves its calls:
// there the client and the server speak the 2026-07-28 protocol (the
// _meta triple on every request, Mcp-Name headers), a session is made per
// POST, and the difference to kubepact is kubepact's own share.
//
//	go test -run '^$' -bench BenchmarkGetProductAllocs -benchtime 2000x ./mcp
func BenchmarkGetProductAllocs(b *testing.B) {
	base := demoService(b, nil)
	params := &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": "p-0001"}}
	run := func(b *testing.B, h http.Handler) {
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(),
			&sdk.StreamableClientTransport{Endpoint: srv.URL + Endpoint, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		for range 50 { // warm connections and caches
			if _, err := cs.CallTool(b.Context(), params); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), params)
			if err != nil || res.IsError {
				b.Fatalf("getProduct: %v %+v", err, res)
			}
		}
	}
	b.Run("floor", func(b *testing.B) {
		mux := http.NewServeMux()
		s := floorServer(base)
		mux.Handle(Endpoint, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
		run(b, mux)
	})
	b.Run("floor-stateless", func(b *testing.B) {
		mux := http.NewServeMux()
		s := floorServer(base)
		mux.Handle(Endpoint, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
			&sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
		run(b, mux)
	})
	b.Run("kubepact", func(b *testing.B) {
		// the harness is one caller as fast as it can go, which the rate
		// limits refuse; the floor has none
		opts := &Options{}
		opts.RateLimit = RateLimitOptions{RequestRate: -1, ToolCallRate: -1}
		run(b, capabilityServer(b, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base}, opts).httpHandler)
	})
}

// floorServer is test/sidecarfloor's server in this process: one tool,
// getProduct, a GET of base/products/{productId} answered as text.
func floorServer(base string) *sdk.Server {
	type productArgs struct {
		ProductID string `json:"productId"`
	}
	client := &http.Client{}
	s := sdk.NewServer(&sdk.Implementation{Name: "floor", Version: "v0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "getProduct"},
		func(ctx context.Context, _ *sdk.CallToolRequest, in productArgs) (*sdk.CallToolResult, any, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/products/"+url.PathEscape(in.ProductID), nil)
			if err != nil {
				return nil, nil, fmt.Errorf("building the request: %w", err)
			}
			resp, err := client.Do(req)
			if err != nil {
				return nil, nil, fmt.Errorf("calling the upstream: %w", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return nil, nil, fmt.Errorf("reading the upstream's answer: %w", err)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}}, nil, nil
		})
	return s
}
