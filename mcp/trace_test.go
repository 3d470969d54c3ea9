package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/tracing"
	"github.com/kubepact/kubepact/test/otlpreceiver"
)

// serverTracing makes tp the process's TracerProvider (the one
// tracing.Setup installs) for the test.
func serverTracing(t testing.TB, tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
}

// metaCarrying is a _meta holding ctx's trace context, as a client
// following SEP-414 sends it.
func metaCarrying(ctx context.Context) map[string]any {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	meta := map[string]any{}
	for k, v := range c {
		meta[k] = v
	}
	return meta
}

// headerInjecting puts the request context's trace context in the HTTP
// headers too, as an instrumented HTTP client does.
type headerInjecting struct{ next http.RoundTripper }

func (h headerInjecting) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	propagation.TraceContext{}.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	return h.next.RoundTrip(r)
}

// TestTraceThroughServerToUpstream: one trace spans the client (its root
// span, its context in _meta and in the HTTP headers), kubepact over
// real HTTP (the request span tools/call getHealth, the tool's
// execute_tool span, the client span of its HTTP call) and the service
// behind the generated tool (its own span, parented on kubepact's call,
// and the traceparent it received). Every span reaches a real OTLP/HTTP
// receiver. The audit line carries the trace id, and so does an error
// answer. Both protocol eras.
func TestTraceThroughServerToUpstream(t *testing.T) {
	rcv := otlpreceiver.Start(t)
	serverTracing(t, rcv.TracerProvider(t, "kubepact"))
	clientTP := rcv.TracerProvider(t, "agent")
	up := rcv.StartService(t)
	logs := &logSink{}
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: up.URL}, &Options{Transport: TransportHTTP, Logger: logs.logger()})
	url := serveHTTP(t, s)

	for _, era := range []string{"2025-11-25", statelessEra} {
		t.Run(era, func(t *testing.T) {
			cs, err := httpClient(t.Context(), t, url, era, &http.Client{Transport: headerInjecting{http.DefaultTransport}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, root := clientTP.Tracer("agent").Start(t.Context(), "tools/call getHealth", trace.WithSpanKind(trace.SpanKindClient))
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}, Meta: metaCarrying(ctx)})
			root.End()
			if err != nil || res.IsError {
				t.Fatalf("getHealth: %v %v", err, res)
			}
			traceID := root.SpanContext().TraceID().String()
			spans := rcv.Trace(traceID)
			agent := otlpreceiver.One(t, spans, "agent", "tools/call getHealth")
			req := otlpreceiver.One(t, spans, "kubepact", "tools/call getHealth")
			exec := otlpreceiver.One(t, spans, "kubepact", "execute_tool getHealth")
			call := otlpreceiver.One(t, spans, "kubepact", "GET")
			svc := otlpreceiver.One(t, spans, "upstream", "GET /healthz")
			for _, link := range []struct {
				child, parent otlpreceiver.Span
			}{{req, agent}, {exec, req}, {call, exec}, {svc, call}} {
				if link.child.ParentSpanID != link.parent.SpanID {
					t.Errorf("%s:%s has parent %s, want %s:%s (%s)", link.child.Service, link.child.Name, link.child.ParentSpanID, link.parent.Service, link.parent.Name, link.parent.SpanID)
				}
			}
			if agent.ParentSpanID != "" {
				t.Errorf("the agent's span has a parent %s; want it the root", agent.ParentSpanID)
			}
			if req.Kind != tracepb.Span_SPAN_KIND_SERVER || call.Kind != tracepb.Span_SPAN_KIND_CLIENT || exec.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
				t.Errorf("kinds: request %v, call %v, execute %v; want SERVER, CLIENT, INTERNAL", req.Kind, call.Kind, exec.Kind)
			}
			for k, want := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "getHealth", "gen_ai.operation.name": "execute_tool",
				"network.transport": "tcp", "mcp.protocol.version": era} {
				if got := req.Attributes[k]; got != want {
					t.Errorf("request span %s = %q, want %q", k, got, want)
				}
			}
			if _, ok := req.Attributes["mcp.session.id"]; ok == (era == statelessEra) {
				t.Errorf("request span mcp.session.id present: %v; want it only in a session (the 2025 era)", ok)
			}
			if call.Attributes["http.response.status_code"] != "200" || !strings.HasSuffix(call.Attributes["url.full"], "/healthz") {
				t.Errorf("client span attributes %v: want status 200 and the URL", call.Attributes)
			}
			tps := up.Traceparents()
			if last := tps[len(tps)-1]; !strings.Contains(last, traceID) || !strings.Contains(last, call.SpanID) {
				t.Errorf("the service received traceparent %q; want trace %s, parent %s (kubepact's call)", last, traceID, call.SpanID)
			}
			if lines := logs.matching(`"traceId"="` + traceID + `"`); len(lines) != 1 || !strings.Contains(lines[0], `"tool"="getHealth"`) {
				t.Errorf("audit lines with the trace id: %q; want the one of this call", lines)
			}

			// An error answer carries its trace id.
			failed := failingCallCarriesTraceID(t, cs, clientTP)
			bad := otlpreceiver.One(t, rcv.Trace(failed.String()), "kubepact", "tools/call getHealth")
			if !bad.StatusError || bad.Attributes["error.type"] != "tool_error" || bad.Attributes["kubepact.error.code"] != CodeInvalidArgument {
				t.Errorf("error span: status error %v, attributes %v; want error.type tool_error, kubepact.error.code %s", bad.StatusError, bad.Attributes, CodeInvalidArgument)
			}
		})
	}
}

// failingCallCarriesTraceID calls getHealth with an unknown argument, in
// a new span of tp's whose context travels in _meta, and checks that the
// tool error carries that span's trace id, which it returns.
func failingCallCarriesTraceID(t *testing.T, cs *sdk.ClientSession, tp trace.TracerProvider) trace.TraceID {
	t.Helper()
	ctx, root := tp.Tracer("agent").Start(t.Context(), "tools/call getHealth")
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{"nope": 1}, Meta: metaCarrying(ctx)})
	root.End()
	if err != nil || !res.IsError {
		t.Fatalf("getHealth with an unknown argument: %v %v; want a tool error", err, res)
	}
	id := root.SpanContext().TraceID()
	if got := res.Meta[TraceIDMeta]; got != id.String() {
		t.Errorf("error result _meta %s = %v, want the caller's trace id %s", TraceIDMeta, got, id)
	}
	return id
}

// TestTraceFromHTTPHeaders: a client that puts its context only in the
// HTTP headers (W3C traceparent) is continued too.
func TestTraceFromHTTPHeaders(t *testing.T) {
	rcv := otlpreceiver.Start(t)
	serverTracing(t, rcv.TracerProvider(t, "kubepact"))
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{RateLimit: RateLimitOptions{ToolCallRate: 0.001, ToolCallBurst: 1}}})
	url := serveHTTP(t, s)
	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	post := func() (int, []byte) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"`+statelessEra+`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", statelessEra)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "pacto_server_info")
		req.Header.Set("traceparent", "00-"+traceID+"-"+parent+"-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, body
	}
	if status, body := post(); status != http.StatusOK {
		t.Fatalf("tools/call: %d %s", status, body)
	}
	// The second is over the tool's limit: a JSON-RPC error whose data
	// carries the trace id.
	if status, body := post(); status != http.StatusOK || !strings.Contains(string(body), `"code":-32029`) || !strings.Contains(string(body), `"traceId":"`+traceID+`"`) {
		t.Errorf("tools/call over the limit: %d %s; want a JSON-RPC error -32029 with data.traceId %s", status, body, traceID)
	}
	var served []otlpreceiver.Span
	for _, sp := range rcv.Trace(traceID) {
		if sp.Name == "tools/call pacto_server_info" {
			served = append(served, sp)
		}
	}
	if len(served) != 2 || served[1].Attributes["error.type"] != "-32029" {
		t.Fatalf("request spans %v; want two, the second with error.type -32029", served)
	}
	span := served[0]
	if span.ParentSpanID != parent {
		t.Errorf("request span's parent %s, want the traceparent header's %s", span.ParentSpanID, parent)
	}
}

// TestTraceOverStdio: on stdio the context travels in _meta alone, and
// the spans say the transport is a pipe.
func TestTraceOverStdio(t *testing.T) {
	rcv := otlpreceiver.Start(t)
	serverTracing(t, rcv.TracerProvider(t, "kubepact"))
	clientTP := rcv.TracerProvider(t, "agent")
	s := newTestServer(t, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.serveStdio(t.Context(), inR, outW); _ = outW.Close() }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, root := clientTP.Tracer("agent").Start(t.Context(), "tools/call pacto_server_info", trace.WithSpanKind(trace.SpanKindClient))
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}, Meta: metaCarrying(ctx)}); err != nil || res.IsError {
		t.Fatalf("pacto_server_info: %v %v", err, res)
	}
	root.End()
	_ = cs.Close()
	if err := <-done; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		t.Errorf("the stdio session ended with %v", err)
	}
	span := otlpreceiver.One(t, rcv.Trace(root.SpanContext().TraceID().String()), "kubepact", "tools/call pacto_server_info")
	if span.ParentSpanID != root.SpanContext().SpanID().String() || span.Attributes["network.transport"] != "pipe" {
		t.Errorf("stdio request span: parent %s, attributes %v; want parent %s and network.transport pipe", span.ParentSpanID, span.Attributes, root.SpanContext().SpanID())
	}
}

// TestTraceWithoutExport: with the no-op provider (no OTEL_* set) kubepact
// starts no span of its own, yet the caller's context still reaches the
// service behind a generated tool (its traceparent names the caller's
// span as the parent), an error answer still carries the trace id, and a
// call without context sends the service none. Both protocol eras.
func TestTraceWithoutExport(t *testing.T) {
	rcv := otlpreceiver.Start(t)
	serverTracing(t, noop.NewTracerProvider())
	if tracing.Recording() {
		t.Fatal("tracing.Recording() is true with the no-op provider")
	}
	clientTP := rcv.TracerProvider(t, "agent")
	up := rcv.StartService(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: up.URL}, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)
	for _, era := range []string{"2025-11-25", statelessEra} {
		t.Run(era, func(t *testing.T) {
			cs, err := httpClient(t.Context(), t, url, era, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, root := clientTP.Tracer("agent").Start(t.Context(), "tools/call getHealth")
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}, Meta: metaCarrying(ctx)})
			root.End()
			if err != nil || res.IsError {
				t.Fatalf("getHealth: %v %v", err, res)
			}
			sc := root.SpanContext()
			tps := up.Traceparents()
			if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; len(tps) == 0 || tps[len(tps)-1] != want {
				t.Errorf("the service received traceparents %q; want the caller's context %s last", tps, want)
			}
			failingCallCarriesTraceID(t, cs, clientTP)
			before := len(up.Traceparents())
			if res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Fatalf("getHealth without context: %v %v", err, res)
			}
			if tps := up.Traceparents(); len(tps) > before && tps[len(tps)-1] != "" {
				t.Errorf("a call without context sent the service traceparent %q", tps[len(tps)-1])
			}
		})
	}
	for _, sp := range rcv.Spans() {
		if sp.Service == "kubepact" {
			t.Errorf("kubepact exported span %s with the no-op provider", sp.Name)
		}
	}
}
