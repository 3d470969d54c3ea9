package traces_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/kubepact/kubepact/fleetgraph/traces"
)

// export builds one export of n calls between 50 services: a client span
// and its server span per call, in protobuf and in OTLP/JSON.
func export(n int) (pb, js []byte) {
	req := &collectortrace.ExportTraceServiceRequest{}
	type jspan struct {
		TraceID      string `json:"traceId"`
		SpanID       string `json:"spanId"`
		ParentSpanID string `json:"parentSpanId,omitempty"`
		Kind         int    `json:"kind"`
		End          string `json:"endTimeUnixNano"`
	}
	var jdoc struct {
		ResourceSpans []map[string]any `json:"resourceSpans"`
	}
	for i := range n {
		from, to := fmt.Sprintf("svc-%d", i%50), fmt.Sprintf("svc-%d", (i+1)%50)
		tid := []byte(fmt.Sprintf("%016x", i))
		cid, sid := []byte(fmt.Sprintf("c%07x", i)), []byte(fmt.Sprintf("s%07x", i))
		for _, s := range []struct {
			svc        string
			id, parent []byte
			kind       tracepb.Span_SpanKind
		}{{from, cid, nil, tracepb.Span_SPAN_KIND_CLIENT}, {to, sid, cid, tracepb.Span_SPAN_KIND_SERVER}} {
			req.ResourceSpans = append(req.ResourceSpans, &tracepb.ResourceSpans{
				Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s.svc}}}}},
				ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: tid, SpanId: s.id, ParentSpanId: s.parent, Kind: s.kind, EndTimeUnixNano: 1785312000000000000}}}},
			})
			js := jspan{TraceID: fmt.Sprintf("%x", tid), SpanID: fmt.Sprintf("%x", s.id), Kind: int(s.kind), End: "1785312000000000000"}
			if s.parent != nil {
				js.ParentSpanID = fmt.Sprintf("%x", s.parent)
			}
			jdoc.ResourceSpans = append(jdoc.ResourceSpans, map[string]any{
				"resource":   map[string]any{"attributes": []map[string]any{{"key": "service.name", "value": map[string]string{"stringValue": s.svc}}}},
				"scopeSpans": []map[string]any{{"spans": []jspan{js}}},
			})
		}
	}
	pb, _ = proto.Marshal(req)
	js, _ = json.Marshal(jdoc)
	return pb, js
}

// BenchmarkReadExport reads one export of 5,000 calls (10,000 spans) in
// each encoding, side by side: go test ./fleetgraph/traces -bench ReadExport.
func BenchmarkReadExport(b *testing.B) {
	pb, js := export(5000)
	for _, enc := range []struct {
		name string
		raw  []byte
		read func(*traces.Accumulator, []byte) error
	}{
		{"protobuf", pb, func(a *traces.Accumulator, raw []byte) error { _, err := a.ReadProto(bytes.NewReader(raw)); return err }},
		{"json", js, func(a *traces.Accumulator, raw []byte) error { _, err := a.ReadJSON(bytes.NewReader(raw)); return err }},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.SetBytes(int64(len(enc.raw)))
			b.ReportAllocs()
			for b.Loop() {
				a := traces.NewAccumulator(traces.Limits{})
				if err := enc.read(a, enc.raw); err != nil {
					b.Fatal(err)
				}
				if a.Observed().Len() != 50 {
					b.Fatalf("%d edges, want 50", a.Observed().Len())
				}
			}
		})
	}
}
