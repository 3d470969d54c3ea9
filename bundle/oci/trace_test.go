package oci_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/kubepact/kubepact/test/otlpreceiver"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestRegistryRequestsCarryTrace: a push and a pull made inside a traced
// call send the W3C traceparent of a client span of theirs, the child of
// the caller's span, and those spans reach an OTLP receiver.
func TestRegistryRequestsCarryTrace(t *testing.T) {
	rcv := otlpreceiver.Start(t)
	otel.SetTracerProvider(rcv.TracerProvider(t, "kubepact"))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	var mu sync.Mutex
	var seen []string
	reg := testregistry.New(t, &testregistry.Options{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("traceparent"))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}})
	c := newClient(t, nil)
	ctx, root := rcv.TracerProvider(t, "agent").Tracer("agent").Start(t.Context(), "pull")
	ref := mustRef(t, "oci://"+reg.Host+"/acme/orders:1.2.0")
	if _, err := c.Push(ctx, ref, newImage(t, ordersFiles, ordersLabels)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pull(ctx, ref); err != nil {
		t.Fatal(err)
	}
	root.End()
	traceID := root.SpanContext().TraceID().String()
	mu.Lock()
	defer mu.Unlock()
	for _, tp := range seen {
		if !strings.Contains(tp, traceID) {
			t.Errorf("a registry request carried traceparent %q; want every one in trace %s", tp, traceID)
		}
	}
	var clientSpans int
	for _, s := range rcv.Trace(traceID) {
		if s.Service == "kubepact" && s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			clientSpans++
			if s.ParentSpanID != root.SpanContext().SpanID().String() {
				t.Errorf("registry span %s has parent %s, want the caller's %s", s.Name, s.ParentSpanID, root.SpanContext().SpanID())
			}
		}
	}
	if len(seen) == 0 || clientSpans < len(seen) {
		t.Errorf("%d registry requests, %d client spans exported; want a span per request (retries aside, at least as many)", len(seen), clientSpans)
	}
}
