package archive_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/archive"
)

// openAPISpec returns a deterministic OpenAPI-like JSON document of about
// size bytes: many paths, each with parameters, a summary and a long
// description of varied words, so it compresses like a real spec rather than
// like repeated text.
func openAPISpec(size int) []byte {
	words := strings.Fields("order customer invoice shipment payment refund status pending active " +
		"returns the identifier of a resource when request is valid otherwise an error with code and message " +
		"pagination cursor limit filter sort ascending descending created updated deleted tenant region")
	rng := rand.New(rand.NewPCG(1, 2))
	sentence := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(parts, " ")
	}
	var b bytes.Buffer
	b.WriteString(`{"openapi":"3.1.0","info":{"title":"orders","version":"1.0.0"},"paths":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/v1/resources%d/{id}":{"get":{"operationId":"getResource%d","summary":%q,"description":%q,`+
			`"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}},`+
			`{"name":"limit","in":"query","schema":{"type":"integer","maximum":%d}}],`+
			`"responses":{"200":{"description":%q,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/R%d"}}}}}}}`,
			i, i, sentence(6), sentence(40), rng.IntN(1000), sentence(8), i%50)
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

func specBundle() fstest.MapFS {
	return fstest.MapFS{
		"pacto.yaml":              {Data: []byte("pactoVersion: \"2.0\"\nservice:\n  name: orders\n  version: 1.0.0\ninterfaces:\n  - name: api\n    type: http\n    ref: interfaces/openapi.json\n")},
		"interfaces/openapi.json": {Data: openAPISpec(5 << 20)},
	}
}

func BenchmarkPack5MiBSpec(b *testing.B) {
	fsys := specBundle()
	b.SetBytes(int64(len(fsys["interfaces/openapi.json"].Data) + len(fsys["pacto.yaml"].Data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := archive.Pack(io.Discard, fsys, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	fsys := specBundle()
	var packed bytes.Buffer
	if err := archive.Pack(&packed, fsys, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(fsys["interfaces/openapi.json"].Data) + len(fsys["pacto.yaml"].Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := archive.Extract(bytes.NewReader(packed.Bytes()), archive.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(packed.Len()), "packed-bytes")
}

// BenchmarkPackSmall packs a bundle of two small files, as a fleet of
// thousands of small bundles does once per bundle for its identity.
func BenchmarkPackSmall(b *testing.B) {
	fsys := fstest.MapFS{
		"pacto.yaml":              {Data: []byte("pactoVersion: \"2.0\"\nservice:\n  name: small\n  version: 1.0.0\n")},
		"interfaces/openapi.yaml": {Data: []byte("openapi: 3.1.0\ninfo: {title: Small, version: 1.0.0}\npaths: {}\n")},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := archive.Pack(io.Discard, fsys, nil); err != nil {
			b.Fatal(err)
		}
	}
}
