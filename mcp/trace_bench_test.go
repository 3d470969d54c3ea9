package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/otlpreceiver"
)

// BenchmarkToolCallTracing is one tools/call (in memory) with tracing
// off (the no-op provider, as without OTEL_*) beside tracing on (the
// SDK's provider, every span sampled and batched to a real OTLP/HTTP
// receiver on loopback), each with and without the caller's context in
// _meta: for kubepact's echo tool, and for a generated tool calling a
// service on loopback (which adds the HTTP client span).
//
//	go test -run '^$' -bench BenchmarkToolCallTracing -benchtime 2000x ./mcp
func BenchmarkToolCallTracing(b *testing.B) {
	rcv := otlpreceiver.Start(b)
	up := rcv.StartService(b)
	exp, err := otlptracehttp.New(b.Context(), otlptracehttp.WithEndpointURL(rcv.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	on := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	b.Cleanup(func() { _ = on.Shutdown(b.Context()) })
	b.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })

	echo := ourServer(b)
	capability := capabilityServer(b, "../examples/bundles/catalog", &openapitools.Options{BaseURL: up.URL}, nil)
	agent := rcv.TracerProvider(b, "agent")
	for _, tool := range []struct {
		name string
		s    *Server
		args map[string]any
	}{{"pacto_test_echo", echo, map[string]any{"name": "hi"}}, {"getHealth", capability, map[string]any{}}} {
		cs := inMemoryClient(b, tool.s.SDK())
		for _, mode := range []struct {
			name string
			tp   trace.TracerProvider
		}{{"off", noop.NewTracerProvider()}, {"on", on}} {
			for _, withMeta := range []bool{false, true} {
				name := tool.name + "/" + mode.name + "/no-context"
				var meta map[string]any
				if withMeta {
					name = tool.name + "/" + mode.name + "/context-in-meta"
					ctx, span := agent.Tracer("agent").Start(b.Context(), "bench")
					meta = metaCarrying(ctx)
					span.End()
				}
				b.Run(name, func(b *testing.B) {
					otel.SetTracerProvider(mode.tp)
					params := &sdk.CallToolParams{Name: tool.name, Arguments: tool.args, Meta: meta}
					b.ReportAllocs()
					for b.Loop() {
						res, err := cs.CallTool(b.Context(), params)
						if err != nil || res.IsError {
							b.Fatalf("CallTool: %v %v", err, res)
						}
					}
				})
			}
		}
	}
}
