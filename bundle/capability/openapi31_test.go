package capability

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// TestProject31Constructs: the OpenAPI 3.1 schema forms project whole —
// $ref with siblings, const, prefixItems, unevaluatedProperties, $defs
// inside a component (by full pointer or "#/$defs/…" from inside it),
// $anchor, boolean schemas in parameters — and the projected schemas
// accept and refuse what the spec does, before anything is sent.
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
	for _, tc := range []struct {
		tool, args string
		refused    string // "" when the arguments are right
	}{
		{"refSiblings", `{"body": {"name": "x"}}`, ""},
		{"refSiblings", `{"body": {"tag": "x"}}`, "name"},
		{"constParam", `{"kind": "widget"}`, ""},
		{"constParam", `{"kind": "gadget"}`, "kind"},
		{"tuple", `{"body": ["a", 1]}`, ""},
		{"tuple", `{"body": ["a", "b"]}`, "body"},
		{"tuple", `{"body": ["a", 1, 2]}`, "body"},
		{"closed", `{"body": {"name": "x", "extra": true}}`, ""},
		{"closed", `{"body": {"name": "x", "other": 1}}`, "body"},
		{"nestedDefs", `{"body": {"point": {"x": 1, "y": 2}, "line": [{"x": 0, "y": 0}]}}`, ""},
		{"nestedDefs", `{"body": {"line": [{"x": 0}]}}`, "body"},
		{"anchor", `{"body": {"item": "a"}}`, ""},
		{"anchor", `{"body": {"item": ""}}`, "body"},
		{"booleans", `{"anything": "x", "filter": {"a": 1}}`, ""},
		{"booleans", `{"filter": {"b": 1}}`, "filter"},
	} {
		tl := c.Tool(tc.tool)
		if tl == nil {
			t.Errorf("no tool %s", tc.tool)
			continue
		}
		_, err := tl.Call(t.Context(), json.RawMessage(tc.args))
		var ae *ArgumentError
		refused := errors.As(err, &ae)
		switch {
		case tc.refused == "" && refused:
			t.Errorf("%s %s refused: %v", tc.tool, tc.args, err)
		case tc.refused != "" && !refused:
			t.Errorf("%s %s accepted (err %v); want it refused on %s", tc.tool, tc.args, err, tc.refused)
		case refused && !strings.Contains(ae.Error(), tc.refused):
			t.Errorf("%s %s: %v; want it to name %s", tc.tool, tc.args, err, tc.refused)
		}
	}
}
