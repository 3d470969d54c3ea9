package chart

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// valueSchema is the part of a JSON Schema node the values check reads.
type valueSchema struct {
	Ref                  string                  `json:"$ref"`
	Type                 json.RawMessage         `json:"type"`
	Description          string                  `json:"description"`
	Properties           map[string]*valueSchema `json:"properties"`
	AdditionalProperties json.RawMessage         `json:"additionalProperties"`
	Items                *valueSchema            `json:"items"`
	AnyOf                []*valueSchema          `json:"anyOf"`
	Definitions          map[string]*valueSchema `json:"definitions"`
}

// valuesSchemaProblems compares a chart's values.yaml with its
// values.schema.json and lists every disagreement: a key of values.yaml the
// schema does not declare, declares without a description or with another
// type, and a property the schema declares that values.yaml leaves out.
func valuesSchemaProblems(valuesYAML, schemaJSON []byte) ([]string, error) {
	var values map[string]any
	if err := yaml.Unmarshal(valuesYAML, &values); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	var root valueSchema
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	c := &schemaCompare{defs: root.Definitions}
	c.object("", values, &root)
	sort.Strings(c.problems)
	return c.problems, nil
}

type schemaCompare struct {
	defs     map[string]*valueSchema
	problems []string
}

func (c *schemaCompare) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// resolve follows a local "#/definitions/..." reference; the node's own
// description, when it has one, is kept over the definition's.
func (c *schemaCompare) resolve(path string, s *valueSchema) *valueSchema {
	if s == nil || s.Ref == "" {
		return s
	}
	name, ok := strings.CutPrefix(s.Ref, "#/definitions/")
	def := c.defs[name]
	if !ok || def == nil {
		c.addf("%s: $ref %q names no definition", path, s.Ref)
		return &valueSchema{}
	}
	out := *def
	if s.Description != "" {
		out.Description = s.Description
	}
	return &out
}

// types are the JSON types a node allows, through anyOf as well.
func (c *schemaCompare) types(path string, s *valueSchema) []string {
	var out []string
	if len(s.Type) > 0 {
		var one string
		var many []string
		switch {
		case json.Unmarshal(s.Type, &one) == nil:
			out = append(out, one)
		case json.Unmarshal(s.Type, &many) == nil:
			out = append(out, many...)
		default:
			c.addf("%s: type is neither a string nor a list", path)
		}
	}
	for _, alt := range s.AnyOf {
		out = append(out, c.types(path, c.resolve(path, alt))...)
	}
	return out
}

// jsonType is the JSON Schema type of a value decoded from YAML.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func (c *schemaCompare) value(path string, v any, s *valueSchema) {
	s = c.resolve(path, s)
	if s.Description == "" {
		c.addf("%s: the schema has no description", path)
	}
	got, allowed := jsonType(v), c.types(path, s)
	switch {
	case len(allowed) == 0:
		c.addf("%s: the schema gives no type", path)
	case !slices.Contains(allowed, got) && (got != "integer" || !slices.Contains(allowed, "number")):
		c.addf("%s: values.yaml has a %s, the schema allows %s", path, got, strings.Join(allowed, " or "))
	}
	switch x := v.(type) {
	case map[string]any:
		c.object(path+".", x, s)
	case []any:
		if s.Items == nil {
			break
		}
		for i, e := range x {
			item := c.resolve(path, s.Items)
			if t := jsonType(e); !slices.Contains(c.types(path, item), t) && (t != "integer" || !slices.Contains(c.types(path, item), "number")) {
				c.addf("%s[%d]: values.yaml has a %s, the schema's items allow %s", path, i, t, strings.Join(c.types(path, item), " or "))
			}
		}
	}
}

// object compares the keys of one map with the properties of its schema.
// A map the schema types by additionalProperties alone (labels, selectors)
// has no fixed keys to compare.
func (c *schemaCompare) object(prefix string, m map[string]any, s *valueSchema) {
	if s.Properties == nil {
		if len(m) > 0 && len(s.AdditionalProperties) == 0 {
			c.addf("%s: values.yaml has keys, the schema declares none", strings.TrimSuffix(prefix, "."))
		}
		return
	}
	for k, v := range m {
		ps, ok := s.Properties[k]
		if !ok {
			c.addf("%s%s: in values.yaml, not in the schema", prefix, k)
			continue
		}
		c.value(prefix+k, v, ps)
	}
	for k := range s.Properties {
		if _, ok := m[k]; !ok {
			c.addf("%s%s: in the schema, not in values.yaml", prefix, k)
		}
	}
}

// TestValuesSchemaMatchesValues: values.schema.json is written by hand
// beside values.yaml, so the two are compared key by key: every key of
// values.yaml is declared with its type and a description, and every
// property the schema declares is a key of values.yaml (the defaults
// document every option).
func TestValuesSchemaMatchesValues(t *testing.T) {
	values, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := valuesSchemaProblems(values, schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestValuesSchemaProblemsFinds: the comparison above reports each kind of
// disagreement (so its silence on the chart means something).
func TestValuesSchemaProblemsFinds(t *testing.T) {
	const schema = `{
  "definitions": {"q": {"type": "string", "description": "A quantity."}},
  "type": "object",
  "properties": {
    "a": {"type": "object", "description": "A.", "properties": {
      "num": {"type": "integer", "description": "Num."},
      "q": {"$ref": "#/definitions/q"},
      "list": {"type": "array", "description": "L.", "items": {"type": "integer"}}
    }},
    "labels": {"type": "object", "description": "Labels.", "additionalProperties": {"type": "string"}},
    "bare": {"type": "string"},
    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "E."}
  }
}`
	for _, tc := range []struct {
		name, values string
		want         []string
	}{
		{"agrees", "a: {num: 1, q: 1m, list: [1, 2]}\nlabels: {x: y}\nbare: ''\neither: 3\n", nil},
		{"unknown key", "a: {num: 1, q: 1m, list: [], extra: true}\nlabels: {}\nbare: ''\neither: x\n", []string{"a.extra: in values.yaml, not in the schema"}},
		{"missing key", "a: {num: 1, list: []}\nlabels: {}\nbare: ''\neither: x\n", []string{"a.q: in the schema, not in values.yaml"}},
		{"wrong type", "a: {num: one, q: 1m, list: []}\nlabels: {}\nbare: ''\neither: x\n", []string{"a.num: values.yaml has a string, the schema allows integer"}},
		{"wrong item type", "a: {num: 1, q: 1m, list: [x]}\nlabels: {}\nbare: ''\neither: x\n", []string{"a.list[0]: values.yaml has a string, the schema's items allow integer"}},
		{"wrong anyOf type", "a: {num: 1, q: 1m, list: []}\nlabels: {}\nbare: ''\neither: true\n", []string{"either: values.yaml has a boolean, the schema allows string or integer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := valuesSchemaProblems([]byte(tc.values), []byte(schema))
			if err != nil {
				t.Fatal(err)
			}
			// "bare" has no description in every case.
			want := append([]string{"bare: the schema has no description"}, tc.want...)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
