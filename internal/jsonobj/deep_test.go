package jsonobj

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestDuplicateKeyPath(t *testing.T) {
	tests := []struct {
		raw   string
		path  string
		found bool
	}{
		{`{"a":1,"b":{"c":[1,{"d":2}]}}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"params":{"name":"x","arguments":{},"name":"y"}}`, "params.name", true},
		{`{"params":{"arguments":{"k":[{"z":1},{"z":1,"z":2}]}}}`, "params.arguments.k[1].z", true},
		{`[{"id":1,"method":"a"},{"id":2,"method":"b","method":"c"}]`, "[1].method", true},
		{`[[],[[]],{"x":{"y":1},"y":{"x":1}}]`, "", false},
		{`{"a":{},"b":{},"a":{}}`, "a", true},
		{`{"":1,"":2}`, "", true},
		{`{"a":1,`, "", false},
		{`"a"`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		path, found := DuplicateKeyPath([]byte(tt.raw))
		if path != tt.path || found != tt.found {
			t.Errorf("DuplicateKeyPath(%s) = %q, %v; want %q, %v", tt.raw, path, found, tt.path, tt.found)
		}
	}
}

// TestDuplicateKeyPathDeep walks a deeply nested document without
// overflowing anything and still finds the duplicate at the bottom.
func TestDuplicateKeyPathDeep(t *testing.T) {
	const depth = 100_000
	raw := strings.Repeat(`{"a":`, depth) + `{"x":1,"x":2}` + strings.Repeat(`}`, depth)
	path, found := DuplicateKeyPath([]byte(raw))
	if !found || !strings.HasSuffix(path, "a.x") || strings.Count(path, ".") != depth {
		t.Errorf("found %v at a path of %d segments", found, strings.Count(path, ".")+1)
	}
}

// BenchmarkDuplicateKeyPath prices the strict envelope check beside what
// the SDK does with the same body anyway (decode it), on a typical
// tools/call and on a 1 MiB one.
func BenchmarkDuplicateKeyPath(b *testing.B) {
	small := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_create","arguments":{"name":"svc","version":"1.0.0",` +
		`"metadata":{"team":"a","tier":"b"},"interfaces":[{"name":"api","type":"openapi"}]}}}`)
	var meta strings.Builder
	for i := 0; meta.Len() < 1<<20; i++ {
		fmt.Fprintf(&meta, `"key%d":{"v":[%d,"x"]},`, i, i)
	}
	large := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_create","arguments":{"name":"svc","metadata":{` +
		strings.TrimSuffix(meta.String(), ",") + `}}}}`)
	for _, in := range []struct {
		name string
		raw  []byte
	}{{"small", small}, {"1MiB", large}} {
		b.Run("check/"+in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, dup := DuplicateKeyPath(in.raw); dup {
					b.Fatal("duplicate")
				}
			}
		})
		b.Run("decode/"+in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(in.raw, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
