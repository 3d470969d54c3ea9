package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// BenchmarkGeneratedArgs compares, in one run, what a generated tool call
// costs on the server's path (tools/call from a go-sdk client in memory:
// the protocol, this package's decoder, invoke.Call) with the decoder
// and invoke.Call alone, and the decoder alone. Every variant sends the
// same request to the demo service over loopback (but the last, which
// sends nothing), so the ratios show the share of the argument path and of
// the protocol.
func BenchmarkGeneratedArgs(b *testing.B) {
	base := demoService(b, nil)
	s := capabilityServer(b, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base, AllowWrites: true}, nil)
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

	b.Run("server tools/call", func(b *testing.B) {
		cs := connect(b.Context(), b, s)
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("%v %s", err, text(res))
			}
		}
	})
	b.Run("mcp.checkAll+invoke.Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			values, diags := dec.checkAll(args)
			if len(diags) > 0 {
				b.Fatal(diags)
			}
			if res, err := invoke.Call(b.Context(), ct, values); err != nil || res.Status != 200 {
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
