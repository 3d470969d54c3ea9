// Package bigspec generates an OpenAPI 3.0 document shaped like the large
// public APIs (cloud providers, payment processors): well over a thousand
// operations, hundreds of component schemas referring to each other in
// deep, shared and cyclic graphs, long descriptions, enums, oneOf and
// allOf. Tests and benchmarks measure projection at that scale with it; the
// document is generated at test time (it is several megabytes) and is the
// same on every run: nothing in it is random.
package bigspec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Shape sizes a document. The zero value is not useful; start from Large.
type Shape struct {
	// Resources is the number of path families; each has a collection and
	// an item path, and a sub-resource action path.
	Resources int
	// Schemas is the number of component schemas.
	Schemas int
	// DescriptionWords is the length of an operation's description.
	DescriptionWords int
}

// Large is a document of about 1,250 operations, 950 component schemas and
// 7.6 MB of JSON.
var Large = Shape{Resources: 250, Schemas: 950, DescriptionWords: 480}

// words feed the descriptions: prose-like, so compression and string
// interning behave as they do on real documents.
var words = strings.Fields(`the resource account customer payment invoice
subscription is returned when request specified identifier must be unique
within scope of your organisation each object carries metadata that you can
use to attach additional structured information this field is only present
for objects created after version and may be null when the upstream system
has not yet reconciled state see documentation for more details about
pagination filtering expansion and idempotency keys retries are safe`)

func text(seed, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(seed*7+i*13+i*i)%len(words)])
	}
	return b.String()
}

func schemaName(i int) string { return fmt.Sprintf("Schema%04d", i) }

func ref(i int) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + schemaName(i)}
}

// schema i refers to schemas after it (a deep chain of shared
// definitions) and, every seventh one, back to an earlier one (a cycle).
func schema(i, n int) map[string]any {
	props := map[string]any{
		"id":       map[string]any{"type": "string", "description": text(i, 30), "readOnly": true},
		"object":   map[string]any{"type": "string", "enum": []any{"kind_" + fmt.Sprint(i%9), "kind_x"}},
		"created":  map[string]any{"type": "integer", "format": "int64", "description": text(i+1, 25)},
		"livemode": map[string]any{"type": "boolean", "nullable": true},
		"status": map[string]any{"type": "string", "description": text(i+2, 40),
			"enum": []any{"active", "canceled", "incomplete", "past_due", "paused", "trialing", "unpaid"}},
		"metadata": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "maxLength": 500}},
		"amount":   map[string]any{"type": "integer", "minimum": 0, "exclusiveMinimum": false, "description": text(i+3, 20)},
	}
	for k := 1; k <= 3; k++ {
		if j := i + k*k + 1; j < n {
			props[fmt.Sprintf("link%d", k)] = ref(j)
		}
	}
	if i%7 == 3 && i > 10 {
		props["parent"] = ref(i - 3) // a cycle: i-3 leads forward to i again
	}
	if i%5 == 0 && i+2 < n {
		props["source"] = map[string]any{
			"description": text(i+4, 30),
			"oneOf":       []any{ref(i + 1), ref(i + 2), map[string]any{"type": "string", "maxLength": 5000}},
		}
	}
	if i%4 == 1 && i+1 < n {
		props["items"] = map[string]any{"type": "array", "items": ref(i + 1), "maxItems": 100}
	}
	s := map[string]any{
		"title":       schemaName(i),
		"type":        "object",
		"description": text(i, 180),
		"properties":  props,
		"required":    []any{"id", "object", "status"},
	}
	if i%6 == 2 && i+5 < n {
		return map[string]any{"description": text(i, 20), "allOf": []any{ref(i + 5), s}}
	}
	return s
}

// Generate returns the document as JSON.
func Generate(sh Shape) []byte {
	schemas := map[string]any{}
	for i := range sh.Schemas {
		schemas[schemaName(i)] = schema(i, sh.Schemas)
	}
	schemas["Error"] = map[string]any{"type": "object", "properties": map[string]any{
		"code": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"}}}
	paths := map[string]any{}
	ops := 0
	op := func(name string, r, k int, params []any, body map[string]any, resp int) map[string]any {
		ops++
		o := map[string]any{
			"operationId": name,
			"summary":     text(r*5+k, 8),
			"description": text(r*5+k, sh.DescriptionWords),
			"tags":        []any{fmt.Sprintf("resource%03d", r)},
			"parameters":  params,
			"responses": map[string]any{
				"200":     map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{"schema": ref(resp)}}},
				"default": map[string]any{"description": "Error", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}},
			},
		}
		if body != nil {
			// Request bodies are smaller than responses, as in real APIs,
			// but still reach a deep shared chain of definitions.
			body = map[string]any{"type": "object", "description": text(r, 40), "required": []any{"spec"},
				"properties": map[string]any{
					"spec":     body,
					"metadata": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
					"mode":     map[string]any{"type": "string", "enum": []any{"sync", "async", "dry_run"}},
				}}
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": body}}}
		}
		return o
	}
	query := func(r int) []any {
		return []any{
			map[string]any{"name": "limit", "in": "query", "description": text(r, 30), "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
			map[string]any{"name": "starting_after", "in": "query", "schema": map[string]any{"type": "string", "maxLength": 5000}},
			map[string]any{"name": "status", "in": "query", "schema": map[string]any{"type": "string", "enum": []any{"active", "canceled", "all"}}},
			map[string]any{"name": "expand", "in": "query", "style": "deepObject", "explode": true, "schema": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		}
	}
	tail := func(r int) int { return sh.Schemas - 24 + r%20 } // request bodies reach 4 to 24 definitions
	idParam := map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string", "maxLength": 5000}}
	for r := range sh.Resources {
		s := (r * 37) % sh.Schemas
		base := fmt.Sprintf("/v1/resource%03d", r)
		paths[base] = map[string]any{
			"get":  op(fmt.Sprintf("list_resource%03d", r), r, 0, query(r), nil, s),
			"post": op(fmt.Sprintf("create_resource%03d", r), r, 1, nil, ref(tail(r)), s),
		}
		paths[base+"/{id}"] = map[string]any{
			"parameters": []any{idParam},
			"get":        op(fmt.Sprintf("get_resource%03d", r), r, 2, nil, nil, s),
			"delete":     op(fmt.Sprintf("delete_resource%03d", r), r, 3, nil, nil, s),
		}
		paths[base+"/{id}/actions/apply"] = map[string]any{
			"post": op(fmt.Sprintf("apply_resource%03d", r), r, 4, []any{idParam},
				map[string]any{"allOf": []any{ref(tail(r + 7)), map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "string"}}}}}, (s+3)%sh.Schemas),
		}
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "Generated large API", "version": "2026-01-01", "description": text(1, 500)},
		"servers": []any{map[string]any{"url": "http://127.0.0.1:8080"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
	out, err := json.Marshal(doc)
	if err != nil {
		panic(err) // maps of plain values always marshal
	}
	return out
}

// Operations is the number of operations a document of shape sh holds.
func (sh Shape) Operations() int { return sh.Resources * 5 }

// WriteBundle returns the files of a Pacto bundle serving the document as
// its one openapi interface: pacto.yaml and openapi.json.
func WriteBundle(sh Shape) map[string][]byte {
	return map[string][]byte{
		"pacto.yaml": []byte(`pactoVersion: "2.0"
service:
  name: large-api
  version: 1.0.0
interfaces:
  - name: api
    type: openapi
    ref: openapi.json
`),
		"openapi.json": Generate(sh),
	}
}
