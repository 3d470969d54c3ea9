package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPShape(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{
			name: "a boolean property schema becomes the object meaning the same",
			in:   `{"type":"object","properties":{"body":true,"never":false}}`,
			want: `{"type":"object","properties":{"body":{},"never":{"not":{}}}}`,
		},
		{
			name: "nested subschemas of every kind",
			in: `{"type":"object","properties":{"a":{"type":"array","items":true,"prefixItems":[true,false]},` +
				`"b":{"anyOf":[true,{"not":false}],"if":true,"then":false,"else":true,"contains":true,"propertyNames":true},` +
				`"c":{"$ref":"#/$defs/x"}},"$defs":{"x":true,"y":{"properties":{"z":true}}},"patternProperties":{"^p":false}}`,
			want: `{"type":"object","properties":{"a":{"type":"array","items":{},"prefixItems":[{},{"not":{}}]},` +
				`"b":{"anyOf":[{},{"not":{"not":{}}}],"if":{},"then":{"not":{}},"else":{},"contains":{},"propertyNames":{}},` +
				`"c":{"$ref":"#/$defs/x"}},"$defs":{"x":{},"y":{"properties":{"z":{}}}},"patternProperties":{"^p":{"not":{}}}}`,
		},
		{
			name: "closing keywords keep their boolean",
			in:   `{"type":"object","additionalProperties":false,"unevaluatedProperties":false,"properties":{"l":{"unevaluatedItems":false,"additionalProperties":{"x":1}}}}`,
			want: `{"type":"object","additionalProperties":false,"unevaluatedProperties":false,"properties":{"l":{"unevaluatedItems":false,"additionalProperties":{"x":1}}}}`,
		},
		{
			name: "values that are not schemas are left alone, numbers exactly",
			in:   `{"type":"object","properties":{"f":{"const":true,"enum":[true,false,{"properties":true}],"default":false,"examples":[true],"x-flag":true,"maximum":9007199254740993,"multipleOf":0.1}}}`,
			want: `{"type":"object","properties":{"f":{"const":true,"enum":[true,false,{"properties":true}],"default":false,"examples":[true],"x-flag":true,"maximum":9007199254740993,"multipleOf":0.1}}}`,
		},
		{
			name: "a property named like a keyword is a schema",
			in:   `{"type":"object","properties":{"default":true,"enum":false,"not":true}}`,
			want: `{"type":"object","properties":{"default":{},"enum":{"not":{}},"not":{}}}`,
		},
		{
			name: "the root is of type object",
			in:   `{"type":["null","object"],"properties":{}}`,
			want: `{"type":"object","properties":{}}`,
		},
		{
			name: "a root without type gets it",
			in:   `{}`,
			want: `{"type":"object"}`,
		},
		{
			name: "draft-04 tuple items",
			in:   `{"type":"object","properties":{"t":{"items":[true,{"items":false}]}}}`,
			want: `{"type":"object","properties":{"t":{"items":[{},{"items":{"not":{}}}]}}}`,
		},
		{
			name: "HTML characters stay as written",
			in:   `{"type":"object","description":"a <b> & c"}`,
			want: `{"type":"object","description":"a <b> & c"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpShape([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decodeJSON(t, tc.want), decodeJSON(t, string(got))); diff != "" {
				t.Errorf("mcpShape(%s) (-want +got):\n%s", tc.in, diff)
			}
			if strings.Contains(tc.in, "9007199254740993") && !strings.Contains(string(got), "9007199254740993") {
				t.Errorf("mcpShape(%s) = %s: a number lost its exact value", tc.in, got)
			}
		})
	}
	for _, bad := range []string{`true`, `[]`, `"object"`, `{`, ``} {
		if got, err := mcpShape([]byte(bad)); err == nil {
			t.Errorf("mcpShape(%q) = %s, want an error", bad, got)
		}
	}
}

// decodeJSON decodes s keeping numbers as written.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}
