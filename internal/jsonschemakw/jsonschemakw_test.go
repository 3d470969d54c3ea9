package jsonschemakw

import (
	"encoding/json"
	"fmt"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSubschemas: what the walker finds under one schema object, and in
// what order.
func TestSubschemas(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema string
		want   []string // keyword/name/index=value
	}{
		{"no subschemas", `{"type": "string", "enum": [{"type": "x"}], "default": {"not": {}}}`, nil},
		{"properties sorted", `{"properties": {"b": true, "a": {"type": "string"}}}`,
			[]string{`properties/a/-1={"type":"string"}`, `properties/b/-1=true`}},
		{"lists keep their order", `{"allOf": [{"minimum": 1}, false], "prefixItems": [true]}`,
			[]string{`allOf//0={"minimum":1}`, `allOf//1=false`, `prefixItems//0=true`}},
		{"one schema each", `{"not": {}, "additionalProperties": false, "if": true, "then": {}, "else": false}`,
			[]string{`additionalProperties//-1=false`, `else//-1=false`, `if//-1=true`, `not//-1={}`, `then//-1={}`}},
		{"tuple items", `{"items": [{"type": "string"}, true]}`,
			[]string{`items//0={"type":"string"}`, `items//1=true`}},
		{"wrong types yield nothing", `{"properties": [1], "allOf": {"a": {}}}`, nil},
		{"old spellings", `{"definitions": {"X": {}}, "additionalItems": false, "dependentSchemas": {"a": {}}}`,
			[]string{`additionalItems//-1=false`, `definitions/X/-1={}`, `dependentSchemas/a/-1={}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for sub := range Subschemas(decode(t, tt.schema)) {
				v, _ := json.Marshal(sub.Value)
				got = append(got, fmt.Sprintf("%s/%s/%d=%s", sub.Keyword, sub.Name, sub.Index, v))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Subschemas = %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestSubschemasStops: the walk ends when the consumer stops.
func TestSubschemasStops(t *testing.T) {
	n := 0
	for range Subschemas(decode(t, `{"allOf": [{}, {}], "properties": {"a": {}, "b": {}}, "not": {}}`)) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("walked %d subschemas after stopping at 2", n)
	}
}

// TestRewrite: every position the walker yields is written back in place.
func TestRewrite(t *testing.T) {
	s := decode(t, `{"properties": {"a": true}, "allOf": [true], "items": [true], "not": true, "additionalProperties": true, "type": "object"}`)
	Rewrite(s, func(sub Sub) any { return sub.Keyword })
	got, _ := json.Marshal(s)
	want := `{"additionalProperties":"additionalProperties","allOf":["allOf"],"items":["items"],"not":"not","properties":{"a":"properties"},"type":"object"}`
	if string(got) != want {
		t.Errorf("Rewrite = %s\nwant %s", got, want)
	}
}

// TestLookup: the table's answers that callers depend on.
func TestLookup(t *testing.T) {
	for k, want := range map[string]Keyword{
		"allOf":                 {Shape: List, InPlace: true},
		"prefixItems":           {Shape: List},
		"not":                   {Shape: One, InPlace: true},
		"items":                 {Shape: One},
		"unevaluatedProperties": {Shape: One, BoolIdiom: true},
		"dependentSchemas":      {Shape: Map, InPlace: true},
		"$defs":                 {Shape: Map},
		"required":              {},
		"enum":                  {},
		"$ref":                  {}, // a reference, not a subschema: callers follow it themselves
	} {
		if got := Lookup(k); got != want {
			t.Errorf("Lookup(%q) = %+v, want %+v", k, got, want)
		}
	}
	for k, want := range map[string]bool{"enum": true, "const": true, "default": true, "examples": true, "example": true, "items": false, "title": false} {
		if got := IsData(k); got != want {
			t.Errorf("IsData(%q) = %v, want %v", k, got, want)
		}
	}
}
