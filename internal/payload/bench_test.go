package payload

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// BenchmarkPayload compares, side by side, what a call costs: reading a
// contract (once per bundle digest in the MCP family, then cached), a
// check of a small body and of a 1,000-line message against a cached
// contract, and an explanation searched across every schema.
func BenchmarkPayload(b *testing.B) {
	catalog, err := bundle.LoadDir("../../examples/bundles/catalog", nil)
	if err != nil {
		b.Fatal(err)
	}
	ordersB, err := bundle.LoadDir("../../examples/bundles/orders", nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := Read(b.Context(), catalog, openapitools.Shapes)
	if err != nil {
		b.Fatal(err)
	}
	orders, err := Read(b.Context(), ordersB, openapitools.Shapes)
	if err != nil {
		b.Fatal(err)
	}
	body := json.RawMessage(`{"sku":"","name":"Lamp","price":{"currency":"euro","amountMinor":-1},"colour":"red"}`)
	var lines strings.Builder
	lines.WriteString(`{"orderId":"o","customerId":"c","lines":[`)
	for i := range 1000 {
		if i > 0 {
			lines.WriteByte(',')
		}
		lines.WriteString(`{"productId":"p","quantity":3}`)
	}
	lines.WriteString(`]}`)
	message := json.RawMessage(lines.String())

	b.Run("Read", func(b *testing.B) {
		for b.Loop() {
			if _, err := Read(b.Context(), catalog, openapitools.Shapes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ValidateBody", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Validate(b.Context(), Subject{Operation: "createProduct"}, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ValidateMessage1000Lines", func(b *testing.B) {
		b.SetBytes(int64(len(message)))
		for b.Loop() {
			if _, err := orders.Validate(b.Context(), Subject{Message: "OrderPlaced"}, message); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Explain", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Explain(b.Context(), FieldQuery{Path: "price.currency"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ExplainMiss", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Explain(b.Context(), FieldQuery{Path: "currenc"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
