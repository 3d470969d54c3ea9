package capability

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
)

// cyclicSpec holds the schema of issue 10 that killed the process on the
// first call (A: anyOf [$ref B, string]; B: allOf [$ref A]) beside a
// legitimate recursive schema, a tree of nodes.
const cyclicSpec = `openapi: 3.1.0
info: {title: cycles, version: "1"}
servers: [{url: 'http://127.0.0.1:1'}]
paths:
  /a:
    get:
      operationId: getA
      parameters:
        - {name: q, in: query, schema: {$ref: '#/components/schemas/A'}}
      responses: {'200': {description: ok}}
  /tree:
    post:
      operationId: postTree
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: '#/components/schemas/Node'}}}
      responses: {'200': {description: ok}}
components:
  schemas:
    A: {anyOf: [{$ref: '#/components/schemas/B'}, {type: string}]}
    B: {allOf: [{$ref: '#/components/schemas/A'}]}
    Node:
      type: object
      properties:
        name: {type: string}
        children: {type: array, items: {$ref: '#/components/schemas/Node'}}
`

func TestCyclicSchemaIsWithheldAndTreesWork(t *testing.T) {
	srv := newEcho(t)
	fsys := fstest.MapFS{"spec.yaml": {Data: []byte(cyclicSpec)}}
	c, err := project(t.Context(), fsys, []spec{{name: "cycles", file: "spec.yaml"}}, &Options{BaseURL: srv.URL, AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tool("getA") != nil {
		t.Fatal("getA is exposed: its first call would overflow the validator's stack")
	}
	var w *Withheld
	for i := range c.Withheld {
		if c.Withheld[i].Name == "getA" {
			w = &c.Withheld[i]
		}
	}
	if w == nil || w.Code != WithheldUnsupported ||
		!strings.Contains(w.Reason, "spec.yaml#/components/schemas/A → spec.yaml#/components/schemas/B → spec.yaml#/components/schemas/A") ||
		!strings.Contains(w.Reason, "without descending into a property or an item") {
		t.Fatalf("getA withheld as %+v; want UNSUPPORTED naming the cycle A → B → A", w)
	}

	tree := c.Tool("postTree")
	if tree == nil {
		t.Fatalf("postTree (a tree of nodes) is not exposed; withheld: %+v", c.Withheld)
	}
	nest := func(levels int) string {
		return `{"body":` + strings.Repeat(`{"name":"n","children":[`, levels) + strings.Repeat(`]}`, levels) + `}`
	}
	res, err := tree.Call(t.Context(), json.RawMessage(nest(20)))
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("a tree 20 levels deep: %v, %+v", err, res)
	}
	_, err = tree.Call(t.Context(), json.RawMessage(nest(1000)))
	ae, ok := err.(*ArgumentError)
	if !ok || len(ae.Diagnostics) != 1 || ae.Diagnostics[0].Field != "body" || !strings.Contains(ae.Diagnostics[0].Message, "nested deeper than 64 levels") {
		t.Fatalf("a tree 1000 levels deep: got %v, want an argument error on body naming the depth limit", err)
	}
}
