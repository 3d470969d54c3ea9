package contract_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle/contract"
)

// wideContract is a pacto.yaml whose metadata mapping holds n keys.
func wideContract(n int) []byte {
	var b strings.Builder
	b.WriteString("pactoVersion: \"2.0\"\nservice:\n  name: wide\n  version: 1.0.0\nmetadata:\n")
	for i := range n {
		fmt.Fprintf(&b, "  k%07d: v\n", i)
	}
	return []byte(b.String())
}

// BenchmarkParseWide measures Parse on metadata mappings of growing width.
// Run with -benchmem; the time per key (ns/op divided by the key count)
// should stay flat from 10k to 1M keys if parsing is linear.
func BenchmarkParseWide(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		data := wideContract(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := contract.ParseLimit(data, len(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}

// TestParseWidestContract parses the widest metadata mapping the size limit
// admits. Before the free-form sections were kept out of the typed decode
// this took the YAML decoder's quadratic duplicate-key scan about 15
// minutes (40k keys: 14 s), so the test ran into go test's timeout; now it
// is one linear pass. A duplicate key among them is still found.
func TestParseWidestContract(t *testing.T) {
	n := 0
	for len(wideContract(n+10_000)) < contract.MaxBytes {
		n += 10_000
	}
	data := wideContract(n)
	c, err := contract.Parse(data)
	if err != nil {
		t.Fatalf("Parse of %d metadata keys (%d bytes): %v", n, len(data), err)
	}
	if len(c.Metadata) != n {
		t.Fatalf("got %d metadata keys, want %d", len(c.Metadata), n)
	}
	const m = 50_000
	dup := slices.Concat(wideContract(m), []byte("  k0000007: again\n"))
	_, err = contract.Parse(dup)
	var pe *contract.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, `key "k0000007" appears twice`) || pe.Line != m+6 {
		t.Fatalf("duplicate metadata key: got %v, want a ParseError at line %d naming k0000007", err, m+6)
	}
}

// BenchmarkTreeJSON writes the catalog example's OpenAPI document, as the
// spec check decodes it, back to JSON: json.Marshal beside AppendJSON,
// which writes the same bytes.
func BenchmarkTreeJSON(b *testing.B) {
	data, err := os.ReadFile("../../examples/bundles/catalog/interfaces/openapi.yaml")
	if err != nil {
		b.Fatal(err)
	}
	tree, err := contract.DecodeDocument("openapi.yaml", data, len(data))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(tree); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := contract.AppendJSON(nil, tree); err != nil {
				b.Fatal(err)
			}
		}
	})
}
