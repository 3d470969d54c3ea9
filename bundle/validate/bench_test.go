package validate_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/validate"
)

// largeBundle builds a contract with 200 interfaces (each a real OpenAPI
// spec in the in-memory FS), 200 dependencies and 100 readiness claims.
func largeBundle() ([]byte, fstest.MapFS) {
	var b strings.Builder
	files := fstest.MapFS{}
	b.WriteString(head)
	b.WriteString("interfaces:\n")
	for i := range 200 {
		name := fmt.Sprintf("interfaces/api-%03d.yaml", i)
		spec := strings.Replace(openAPISpec, "/ping", fmt.Sprintf("/ping/%d", i), 1)
		spec = strings.Replace(spec, "operationId: ping", fmt.Sprintf("operationId: ping%d", i), 1)
		files[name] = &fstest.MapFile{Data: []byte(spec)}
		fmt.Fprintf(&b, "  - {name: api-%03d, type: openapi, ref: %s, visibility: internal}\n", i, name)
	}
	b.WriteString("dependencies:\n")
	for i := range 200 {
		fmt.Fprintf(&b, "  - {name: dep-%03d, ref: 'oci://registry.example.com/team/dep-%03d@sha256:%064x', required: %v, compatibility: '^%d.0.0'}\n", i, i, i, i%2 == 0, i%5+1)
	}
	b.WriteString("readiness:\n  expires: '2099-12-31'\n  minScore: 80\n  claims:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "    - {id: claim-%03d, type: url, category: testing, status: done, evidence: 'https://ci.example.com/%d', weight: %d, description: claim %d}\n", i, i, i%100, i)
	}
	b.WriteString("metadata: {tier: domain, tags: [a, b, c]}\n")
	return []byte(b.String()), files
}

func BenchmarkParseValidateLarge(b *testing.B) {
	raw, files := largeBundle()
	if r := validate.ValidateBytes(b.Context(), raw, files, nil); !r.Valid() {
		b.Fatalf("large bundle is invalid: %+v", r.Errors[:min(3, len(r.Errors))])
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		validate.ValidateBytes(b.Context(), raw, files, nil)
	}
}

// wideSpec is an OpenAPI document whose one schema has n properties.
func wideSpec(n int) []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: w, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/W'}}}}}\ncomponents:\n  schemas:\n    W:\n      type: object\n      properties:\n")
	for i := range n {
		fmt.Fprintf(&b, "        p%06d: {type: string}\n", i)
	}
	return []byte(b.String())
}

// BenchmarkCheckWideSpec checks a bundle whose OpenAPI schema has 10k and
// 100k properties. kin-openapi's loader decodes YAML with a decoder that
// compares every key of a mapping with every other key; the document now
// reaches it as JSON from the one-pass tree, so ns/property stays flat.
func BenchmarkCheckWideSpec(b *testing.B) {
	src := []byte(head + "interfaces: [{name: a, type: openapi, ref: spec.yaml}]\n")
	for _, n := range []int{10_000, 100_000} {
		files := fstest.MapFS{"spec.yaml": {Data: wideSpec(n)}}
		b.Run(fmt.Sprintf("properties=%d", n), func(b *testing.B) {
			for b.Loop() {
				if r := validate.ValidateBytes(b.Context(), src, files, nil); !r.Valid() {
					b.Fatal(r.Errors)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/property")
		})
	}
}
