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
