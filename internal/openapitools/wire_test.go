package openapitools

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWireRouteFor31 checks that an OpenAPI 3.1 operation is validated by
// kin-openapi on the wire with nothing left that would make it compile a
// validator per call (invoke's TestWireCheckOf31 checks that the wire
// check still refuses what it must).
func TestWireRouteFor31(t *testing.T) {
	c, err := project(t.Context(), testdataFS(t), []spec{{name: "tree", file: "circular31.yaml"}}, &Options{BaseURL: "http://127.0.0.1:9", AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	op := c.Tool("getThing").op
	route := op.route()
	if route == nil {
		t.Fatal("no kin-openapi route for a 3.1 operation")
	}
	if route.Doc.IsOpenAPI31OrLater() {
		t.Errorf("route declares OpenAPI %s; kin-openapi would compile a 2020-12 validator per call", route.Doc.OpenAPI)
	}
	raw, err := json.Marshal(route.Operation.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	for _, kw := range []string{"const", "exclusiveMinimum", "examples"} {
		if strings.Contains(string(raw), kw) {
			t.Errorf("wire route keeps %s: %s", kw, raw)
		}
	}
}

func TestWireRouteOfRecursiveBody(t *testing.T) {
	c, err := project(t.Context(), testdataFS(t), []spec{{name: "tree", file: "circular31.yaml"}}, &Options{BaseURL: "http://127.0.0.1:9", AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	route := c.Tool("createNode").op.route()
	node := route.Operation.RequestBody.Value.Content.Get("application/json").Schema.Value
	if got := node.Properties["children"].Value.Items.Value; got != node {
		t.Errorf("recursive schema not kept as one copy: children items %p, node %p", got, node)
	}
	if len(node.Required) > 0 || node.Description != "" {
		t.Errorf("wire copy keeps required %v / description %q", node.Required, node.Description)
	}
}
