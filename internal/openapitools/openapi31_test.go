package openapitools

import (
	"encoding/json"
	"os"
	"testing"
	"testing/fstest"
)

// TestProject31Constructs: the OpenAPI 3.1 schema forms project whole —
// $ref with siblings, const, prefixItems, unevaluatedProperties, $defs
// inside a component (by full pointer or "#/$defs/…" from inside it),
// $anchor, boolean schemas in parameters — into one object schema per
// argument.
func TestProject31Constructs(t *testing.T) {
	data, err := os.ReadFile("testdata/constructs31.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := project(t.Context(), fstest.MapFS{"s.yaml": {Data: data}}, []spec{{name: "a", file: "s.yaml"}}, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range c.Withheld {
		t.Errorf("withheld %s: %s", w.Name, w.Reason)
	}
	for _, tl := range c.Tools {
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		for name, p := range s.Properties {
			if _, ok := p.(map[string]any); !ok {
				t.Errorf("%s: property %s is %v, not an object schema", tl.Name, name, p)
			}
		}
	}
	// What the projected schemas accept and refuse is checked through the
	// MCP server, with the messages an agent reads: mcp's
	// TestOpenAPI31ConstructsArguments.
}
