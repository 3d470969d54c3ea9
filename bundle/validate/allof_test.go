package validate_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/validate"
)

// closedAllOfSpec is an OpenAPI document whose Product is an allOf over a
// closed NewProduct and a branch that adds id and stock: the catalog
// example as it was.
func closedAllOfSpec(version, product string) string {
	return "openapi: " + version + `
info: {title: shop, version: '1'}
paths:
  /p:
    get:
      operationId: p
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/Product'}}}
components:
  schemas:
    NewProduct:
      type: object
      additionalProperties: false
      required: [sku]
      properties: {sku: {type: string}, price: {type: integer}}
    Base:
      type: object
      required: [sku]
      properties: {sku: {type: string}}
    Product:
` + product
}

const (
	overClosed = `      allOf:
        - $ref: '#/components/schemas/NewProduct'
        - type: object
          required: [id]
          properties: {id: {type: string}, stock: {type: integer}}
`
	// closedAtTop is the remedy: open branches, closed by
	// unevaluatedProperties beside the allOf.
	closedAtTop = `      allOf:
        - $ref: '#/components/schemas/Base'
        - type: object
          properties: {id: {type: string}}
      unevaluatedProperties: false
`
	// constraintsOnly narrows a closed schema without adding fields.
	constraintsOnly = `      allOf:
        - $ref: '#/components/schemas/NewProduct'
        - {type: object, required: [price], minProperties: 2}
`
	// inProperty hides the same mistake in a property called default.
	inProperty = `      type: object
      properties:
        default:
          allOf:
            - $ref: '#/components/schemas/NewProduct'
            - {type: object, properties: {colour: {type: string}}}
`
)

func checkSpecWarnings(t *testing.T, spec string) []validate.Finding {
	t.Helper()
	src := []byte(head + "interfaces: [{name: http, type: openapi, ref: openapi.yaml}]\n")
	r := validate.ValidateBytes(t.Context(), src, fstest.MapFS{"openapi.yaml": {Data: []byte(spec)}}, nil)
	if !r.Valid() {
		t.Fatalf("errors %+v: a closed allOf is a warning, never an error", r.Errors)
	}
	var out []validate.Finding
	for _, w := range r.Warnings {
		if w.Code == validate.CodeAllOfClosedSchema {
			out = append(out, w)
		}
	}
	return out
}

// pacto_check warns of an allOf over a closed schema that refuses the
// fields the rest of the allOf declares, says where and which fields, and
// gives the remedy the document's dialect allows; an allOf that only adds
// constraints, or one closed at the top, is not warned of.
func TestClosedAllOfIsWarned(t *testing.T) {
	tests := []struct {
		name, version, product string
		says                   []string
		not                    []string
	}{
		{"over a closed schema (3.1)", "3.1.0", overClosed,
			[]string{"openapi.yaml#/components/schemas/Product is an allOf over #/components/schemas/NewProduct", "refuses id, stock", "Remedy: close the composition at the top", "unevaluatedProperties: false"}, nil},
		{"over a closed schema (3.0)", "3.0.3", overClosed,
			[]string{"refuses id, stock", "Remedy: merge the branches into one schema"}, []string{"unevaluatedProperties: false beside"}},
		{"inside a property named default", "3.1.0", inProperty,
			[]string{"#/components/schemas/Product/properties/default is an allOf", "refuses colour"}, nil},
		{"closed at the top", "3.1.0", closedAtTop, nil, nil},
		{"constraints only", "3.1.0", constraintsOnly, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkSpecWarnings(t, closedAllOfSpec(tt.version, tt.product))
			if len(tt.says) == 0 {
				if len(got) != 0 {
					t.Errorf("warned: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Path != "interfaces[0].ref" {
				t.Fatalf("warnings %+v, want one at interfaces[0].ref", got)
			}
			for _, s := range tt.says {
				if !strings.Contains(got[0].Message, s) {
					t.Errorf("message lacks %q:\n%s", s, got[0].Message)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(got[0].Message, s) {
					t.Errorf("message has %q:\n%s", s, got[0].Message)
				}
			}
		})
	}
}

// manyClosedAllOfs is a spec of n schemas, each an allOf of w closed
// branches that refuse each other's fields.
func manyClosedAllOfs(n, w int) string {
	var b strings.Builder
	b.WriteString("openapi: 3.1.0\ninfo: {title: many, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n")
	for i := range n {
		fmt.Fprintf(&b, "    S%d:\n      allOf:\n", i)
		for j := range w {
			fmt.Fprintf(&b, "        - {type: object, additionalProperties: false, properties: {f%d: {type: string}}}\n", j)
		}
	}
	return b.String()
}

// A spec built to multiply findings gets a bounded report.
func TestClosedAllOfFindingsAreBounded(t *testing.T) {
	got := checkSpecWarnings(t, manyClosedAllOfs(100, 200))
	if len(got) != 21 || !strings.Contains(got[20].Message, "more allOfs over a closed schema than the 20 reported") {
		t.Errorf("%d warnings; last %+v", len(got), got[len(got)-1])
	}
	if !strings.Contains(got[0].Message, "and 58 more") {
		t.Errorf("a finding lists every refused field: %s", got[0].Message)
	}
}

// BenchmarkClosedAllOf measures the check on a spec of many wide allOfs
// against the same spec with its allOfs renamed (the check's quick exit).
func BenchmarkClosedAllOf(b *testing.B) {
	spec := manyClosedAllOfs(500, 64)
	src := []byte(head + "interfaces: [{name: http, type: openapi, ref: openapi.yaml}]\n")
	for _, tc := range []struct{ name, spec string }{{"allOf", spec}, {"anyOf", strings.ReplaceAll(spec, "allOf", "anyOf")}} {
		files := fstest.MapFS{"openapi.yaml": {Data: []byte(tc.spec)}}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				validate.ValidateBytes(b.Context(), src, files, nil)
			}
		})
	}
}
