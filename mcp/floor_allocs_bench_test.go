package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	rtmetrics "runtime/metrics"
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
// allocates above the floor's per call. The client speaks its default
// protocol on floor and kubepact (sessions with the floor, the stateless
// era with kubepact: see run) and sessions on kubepact-sessions, which is
// the line to set beside the floor for kubepact's own share in that era.
// floor-stateless is the floor's server on the go-sdk's stateless path, as
// kubepact serves the client's default era: there the client and the
// server speak the 2026-07-28 protocol (the _meta triple on every request,
// Mcp-Name headers) and a session is made per POST, so the line to set
// beside kubepact is floor-stateless.
//
//	go test -run '^$' -bench BenchmarkGetProductAllocs -benchtime 2000x ./mcp
func BenchmarkGetProductAllocs(b *testing.B) {
	base := demoService(b, nil)
	// protocol "" is the client's default, the latest: the stateless
	// 2026-07-28 era against kubepact, which routes it to the SDK's
	// stateless handler (a session made and closed per request), and
	// sessions against the floor, a stateful go-sdk handler that refuses
	// the stateless era so the client falls back. "2025-11-25" pins
	// sessions on both.
	run := func(b *testing.B, h http.Handler, protocol string) {
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(),
			&sdk.StreamableClientTransport{Endpoint: srv.URL + Endpoint, DisableStandaloneSSE: true, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		// Each run its own params: in the stateless era the client writes
		// _meta.protocolVersion into them, and a later run's client would
		// then send that era's header whatever it negotiated.
		params := &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": "p-0001"}}
		for range 50 { // warm connections and caches
			if _, err := cs.CallTool(b.Context(), params); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		created := goroutinesCreated()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), params)
			if err != nil || res.IsError {
				b.Fatalf("getProduct: %v %+v", err, res)
			}
		}
		// Each goroutine started is a hand-off the scheduler wakes a
		// thread for; like allocs/op it counts both ends of the call.
		b.ReportMetric(float64(goroutinesCreated()-created)/float64(b.N), "goroutines/op")
	}
	b.Run("floor", func(b *testing.B) {
		mux := http.NewServeMux()
		s := floorServer(base)
		mux.Handle(Endpoint, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
		run(b, mux, "")
	})
	b.Run("floor-stateless", func(b *testing.B) {
		mux := http.NewServeMux()
		s := floorServer(base)
		mux.Handle(Endpoint, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
			&sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
		run(b, mux, "")
	})
	kubepact := func(b *testing.B) http.Handler {
		// the harness is one caller as fast as it can go, which the rate
		// limits refuse; the floor has none
		opts := &Options{}
		opts.RateLimit = RateLimitOptions{RequestRate: -1, ToolCallRate: -1}
		return capabilityServer(b, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base}, opts).httpHandler
	}
	b.Run("kubepact", func(b *testing.B) { run(b, kubepact(b), "") })
	b.Run("kubepact-sessions", func(b *testing.B) { run(b, kubepact(b), "2025-11-25") })
}

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []rtmetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
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
