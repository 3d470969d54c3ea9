package mcp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestDecodeHeaderValue(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"listProducts", "listProducts", true},
		{"=?base64?bGlzdFByb2R1Y3Rz?=", "listProducts", true},
		{"=?base64?cGFjdG86Ly9za2lsbHMvY2Fmw6k=?=", "pacto://skills/café", true},
		{"=?base64??=", "", true},                  // the empty value, as the TypeScript client sends it
		{"=?base64?bGlzdA", "", false},             // no closing sentinel
		{"=?base64?@@?=", "", false},               // not base64
		{"=?base64?/w==?=", "", false},             // base64 of a byte that is not UTF-8
		{"?=listProducts", "?=listProducts", true}, // no opening sentinel: plain
	} {
		got, ok := decodeHeaderValue(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestShownHeaderIsBounded(t *testing.T) {
	long := strings.Repeat("é", 1<<16) // 128 KiB, two bytes a rune
	got := shownHeader(long)
	if len(got) > maxShownHeader+64 || !strings.HasSuffix(got, "… (131072 bytes)") {
		t.Errorf("shownHeader of a 128 KiB value: %d bytes, %q…", len(got), got[:40])
	}
	if got := shownHeader("tools/list"); got != `"tools/list"` {
		t.Errorf("shownHeader(tools/list) = %s", got)
	}
}

// BenchmarkStandardHeaders measures what the header check adds to a
// 2026-07-28 tools/call on top of the strict envelope every message goes
// through: "envelope" is the envelope alone, "envelope+headers" both.
func BenchmarkStandardHeaders(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"adjustStock","arguments":{"note":%q},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			strings.Repeat("x", size)))
		h := http.Header{}
		h.Set(protocolVersionHeader, statelessEra)
		h.Set(methodHeader, "tools/call")
		h.Set(nameHeader, "adjustStock")
		b.Run(fmt.Sprintf("envelope/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if c := inspectEnvelope(body); c.refused != nil {
					b.Fatal(c.refused.msg)
				}
			}
		})
		b.Run(fmt.Sprintf("envelope+headers/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				c := inspectEnvelope(body)
				if c.refused != nil {
					b.Fatal(c.refused.msg)
				}
				if e := checkStandardHeaders(h, c); e != nil {
					b.Fatal(e.msg)
				}
			}
		})
	}
}
