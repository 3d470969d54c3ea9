// Package otlpreceiver is a real OTLP/HTTP trace receiver for tests: an
// HTTP server on 127.0.0.1 that decodes each protobuf
// ExportTraceServiceRequest POSTed to /v1/traces and keeps its spans.
// It is test-only; production code never imports it.
package otlpreceiver

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	Service      string            // the resource's service.name
	Resource     map[string]string // every resource attribute of string value
	Name         string
	Kind         tracepb.Span_SpanKind
	TraceID      string // hex
	SpanID       string
	ParentSpanID string // "" for a root
	Attributes   map[string]string
	StatusError  bool
}

// Receiver holds what it received.
type Receiver struct {
	// URL is the receiver's base, for OTEL_EXPORTER_OTLP_ENDPOINT
	// (the exporter adds /v1/traces).
	URL string

	mu       sync.Mutex
	spans    []Span
	requests int
}

// Start serves a receiver for the test's life.
func Start(t testing.TB) *Receiver {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{URL: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.export)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

func (r *Receiver) export(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 16<<20))
	if err != nil {
		http.Error(w, "body", http.StatusBadRequest)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest", http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		service := res["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, kv := range s.GetAttributes() {
					switch v := kv.GetValue().GetValue().(type) {
					case *commonpb.AnyValue_StringValue:
						attrs[kv.GetKey()] = v.StringValue
					case *commonpb.AnyValue_IntValue:
						attrs[kv.GetKey()] = strconv.FormatInt(v.IntValue, 10)
					case *commonpb.AnyValue_BoolValue:
						attrs[kv.GetKey()] = strconv.FormatBool(v.BoolValue)
					default:
						attrs[kv.GetKey()] = kv.GetValue().String()
					}
				}
				got = append(got, Span{
					Service: service, Resource: res, Name: s.GetName(), Kind: s.GetKind(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Attributes: attrs,
					StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests is the number of export requests received.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Trace returns the received spans of one trace.
func (r *Receiver) Trace(traceID string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// TracerProvider is a TracerProvider of service that sends every span,
// as it ends, to r over OTLP/HTTP (the SDK's own exporter).
func (r *Receiver) TracerProvider(t testing.TB, service string) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(r.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))))
	t.Cleanup(func() { _ = tp.Shutdown(context.WithoutCancel(t.Context())) })
	return tp
}

// Service is a real HTTP service that continues the trace of each
// request it gets with a SERVER span of its own ("METHOD /path",
// service "upstream", exported to the receiver) and records the
// traceparent it received. It answers {"status":"ok"}.
type Service struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

// StartService serves a Service for the test's life.
func (r *Receiver) StartService(t testing.TB) *Service {
	t.Helper()
	tp := r.TracerProvider(t, "upstream")
	u := &Service{}
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, req.Header.Get("traceparent"))
		u.mu.Unlock()
		ctx := propagation.TraceContext{}.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		_, span := tp.Tracer("upstream").Start(ctx, req.Method+" "+req.URL.Path, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	u.URL = "http://" + ln.Addr().String()
	return u
}

// Traceparents are the traceparent headers received, in order.
func (u *Service) Traceparents() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// One returns the span of service and name among spans, or fails the
// test naming what the trace holds.
func One(t testing.TB, spans []Span, service, name string) Span {
	t.Helper()
	var found []Span
	for _, s := range spans {
		if s.Service == service && s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Service+":"+s.Name)
		}
		t.Fatalf("%d spans %s:%q in the trace, want 1; the trace has %v", len(found), service, name, names)
	}
	return found[0]
}
