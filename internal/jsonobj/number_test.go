package jsonobj

import (
	"strings"
	"testing"
)

func TestLongNumber(t *testing.T) {
	long := "1" + strings.Repeat("0", 500000)
	for _, tc := range []struct {
		doc      string
		wantPath string
		found    bool
	}{
		{`{"a": 1, "b": [1.5, -2e10, 0.000001, 123456789012345678901234567890]}`, "", false},
		{`1e400`, "", false},
		{`-1e-400`, "", false},
		{`1e401`, "", true},
		{`{"a": {"b": [0, 1, 1e999999999]}}`, "a.b[2]", true},
		{`{"a": 1e-999999}`, "a", true},
		{`{"x": [` + long + `]}`, "x[0]", true},
		{`{"x": "` + long + `"}`, "", false}, // a string is not a number
		{`{"x": 0.` + strings.Repeat("0", 200) + `1}`, "x", true},
		{`{"x": 1e0000000000000000000000001}`, "", false}, // the exponent is 1
		{`{"x": 1e`, "", false},                           // not JSON: the decoder says so
	} {
		f, found := LongNumber([]byte(tc.doc))
		if found != tc.found || f.Path != tc.wantPath {
			t.Errorf("LongNumber(%.40q) = %+v, %v; want path %q, %v", tc.doc, f, found, tc.wantPath, tc.found)
		}
		if found && !strings.Contains(f.Reason(), "at most 100 digits and an exponent of at most ±400") {
			t.Errorf("Reason() = %q; want it to name the bounds", f.Reason())
		}
	}
	f, _ := LongNumber([]byte(long))
	if f.Digits != 500001 || len(f.Prefix) > 24 || !strings.Contains(f.Reason(), "has 500001 digits") {
		t.Errorf("a 500001-digit integer: %+v, %q", f, f.Reason())
	}
	f, _ = LongNumber([]byte(`[1e999999999]`))
	if f.Exponent != 999999999 || !strings.Contains(f.Reason(), "has the exponent 999999999") {
		t.Errorf("1e999999999: %+v, %q", f, f.Reason())
	}
}

// BenchmarkLongNumber: the check of a 1 MiB document of ordinary numbers
// (what every call pays) is one pass over its bytes; a document whose
// last number is past the bounds (what a refused call pays) adds a pass
// over its tokens, for the path.
func BenchmarkLongNumber(b *testing.B) {
	for _, tc := range []struct{ name, last string }{{"ordinary", "1"}, {"refused", "1e-999999"}} {
		doc := []byte("[" + strings.Repeat("12345.6789e-300,", 65000) + tc.last + "]")
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				LongNumber(doc)
			}
		})
	}
}
