package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle/capability"
)

// BenchmarkGeneratedArgs compares, in one run, the two ways a generated
// tool's arguments can be decoded and checked before the call is sent to
// the demo service: inside bundle/capability (Tool.Call, the path before
// this package took it over) and by this package's decoder followed by
// Tool.CallChecked (the server's path). Both send the same request to the
// same service over loopback, so the difference is the argument path.
func BenchmarkGeneratedArgs(b *testing.B) {
	base := demoService(b, nil)
	s := capabilityServer(b, "../examples/bundles/catalog", &capability.Options{BaseURL: base, AllowWrites: true}, nil)
	ct := s.opts.Capability.Capability.Tool("listProducts")
	var input jsonschema.Schema
	if err := json.Unmarshal(ct.InputSchema, &input); err != nil {
		b.Fatal(err)
	}
	dec, err := newArgDecoderResolved(&input, ct.ArgumentSchemas())
	if err != nil {
		b.Fatal(err)
	}
	dec.encoded = false
	args := json.RawMessage(`{"tag":["camping","light"],"limit":5,"X-Request-ID":"bench-1"}`)

	b.Run("capability.Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := ct.Call(b.Context(), args); err != nil || res.Status != 200 {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("mcp.checkAll+CallChecked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			values, diags := dec.checkAll(args)
			if len(diags) > 0 {
				b.Fatal(diags)
			}
			if res, err := ct.CallChecked(b.Context(), values); err != nil || res.Status != 200 {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("mcp.checkAll only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, diags := dec.checkAll(args); len(diags) > 0 {
				b.Fatal(diags)
			}
		}
	})
}
