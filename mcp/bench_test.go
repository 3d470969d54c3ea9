package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// bareServer is the baseline: the same SDK with one raw no-op tool, no
// decoding, no envelope, no audit and no metrics.
func bareServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "bare", Version: "v0"}, nil)
	s.AddTool(&sdk.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	return s
}

// ourServer is a full kubepact server (authoring family, audit middleware,
// metrics on a registry) plus an echo tool built like every family's tools.
func ourServer(b *testing.B) *Server {
	s := newTestServer(b, &Options{Registerer: prometheus.NewRegistry()})
	addTestTool(b, s, echoTool(b))
	return s
}

func benchCalls(b *testing.B, cs *sdk.ClientSession, name string, args map[string]any) {
	b.Helper()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(b.Context(), params)
		if err != nil || res.IsError {
			b.Fatalf("CallTool: %v %v", err, res)
		}
	}
}

func inMemoryClient(b *testing.B, s *sdk.Server) *sdk.ClientSession {
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Connect(b.Context(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkToolCall compares one tools/call round trip through kubepact's
// plumbing with a bare no-op tool on the same SDK, in memory and over
// Streamable HTTP (a 2026-07-28 stateless client and a 2025-11-25 session).
// Compare the kubepact and bare lines of each transport.
func BenchmarkToolCall(b *testing.B) {
	args := map[string]any{"name": "bench", "count": 3}

	b.Run("inmemory/bare", func(b *testing.B) {
		benchCalls(b, inMemoryClient(b, bareServer()), "noop", args)
	})
	b.Run("inmemory/kubepact", func(b *testing.B) {
		benchCalls(b, inMemoryClient(b, ourServer(b).SDK()), "pacto_test_echo", args)
	})

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		b.Run("http-"+version+"/bare", func(b *testing.B) {
			srv := bareServer()
			ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: version == "2026-07-28"}))
			b.Cleanup(ts.Close)
			cs, err := httpClient(b.Context(), b, ts.URL, version, nil)
			if err != nil {
				b.Fatal(err)
			}
			benchCalls(b, cs, "noop", args)
		})
		b.Run("http-"+version+"/kubepact", func(b *testing.B) {
			ts := httptest.NewServer(ourServer(b).httpHandler)
			b.Cleanup(ts.Close)
			cs, err := httpClient(b.Context(), b, ts.URL+Endpoint, version, nil)
			if err != nil {
				b.Fatal(err)
			}
			benchCalls(b, cs, "pacto_test_echo", args)
		})
	}
}
