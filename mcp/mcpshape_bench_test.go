package mcp

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// BenchmarkToolSchemaEncoding compares encoding tool schemas for tools/list
// as before (json.Marshal) and as now (json.Marshal, then mcpShape), side
// by side: the shaping runs once per tool, when the tool is registered.
func BenchmarkToolSchemaEncoding(b *testing.B) {
	s := capabilityServer(b, "../examples/bundles/catalog", &openapitools.Options{BaseURL: "http://127.0.0.1:1", AllowWrites: true}, nil)
	var catalog []*jsonschema.Schema
	for _, t := range s.tools {
		input := t.input
		if input == nil {
			// A generated tool keeps its projected schema encoded
			// (inputJSON); decode it so both sides encode the same value.
			input = new(jsonschema.Schema)
			if err := json.Unmarshal(t.inputJSON, input); err != nil {
				b.Fatalf("tool %s: input schema: %v", t.name, err)
			}
		}
		catalog = append(catalog, input, withErrorAlternative(t.output))
	}
	// A wide generated schema: 2,000 properties, each an object of three
	// fields (one unconstrained) reaching a shared $defs entry.
	wide := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Defs: map[string]*jsonschema.Schema{
		"Money": {Type: "object", Properties: map[string]*jsonschema.Schema{"currency": {Type: "string", Enum: []any{"EUR", "USD"}}, "cents": {Type: "integer"}}},
	}}
	for i := range 2000 {
		wide.Properties[fmt.Sprintf("field%04d", i)] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"name": {Type: "string", Description: "a long description of the field that real APIs carry, repeated for size"},
			"any":  {},
			"cost": {Ref: "#/$defs/Money"},
		}}
	}
	for _, tc := range []struct {
		name    string
		schemas []*jsonschema.Schema
	}{{"catalog", catalog}, {"wide2000", []*jsonschema.Schema{wide}}} {
		b.Run(tc.name+"/marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, sc := range tc.schemas {
					if _, err := json.Marshal(sc); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(tc.name+"/marshal+shape", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, sc := range tc.schemas {
					raw, err := json.Marshal(sc)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := mcpShape(raw); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
