package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestExplain pins the messages the argument decoder writes from a schema:
// each says what was given and what is accepted, in words, and none shows
// a Go rendering of a value.
func TestExplain(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{
		"$defs": {"Money": {"type": "object", "additionalProperties": false, "required": ["currency"],
			"properties": {"currency": {"type": "string", "pattern": "^[A-Z]{3}$"}, "minor": {"type": "integer", "minimum": 0}}}},
		"type": "object",
		"properties": {
			"limit": {"type": "integer", "minimum": 1, "maximum": 100},
			"mode": {"enum": ["fast", "slow"]},
			"tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "minLength": 1}},
			"price": {"$ref": "#/$defs/Money"},
			"names": {"type": ["array", "string"], "items": {"type": "string"}}
		}}`), &s); err != nil {
		t.Fatal(err)
	}
	r := schemaReader{defs: s.Defs}
	for _, tc := range []struct {
		arg      string
		value    string
		want     string
		expected string // what the fault says is accepted, when the case pins it
	}{
		{"limit", `500`, `"limit" must be at most 100; got 500`, "an integer from 1 to 100"},
		{"limit", `0`, `"limit" must be at least 1; got 0`, "an integer from 1 to 100"},
		{"limit", `2.5`, `"limit" must be an integer from 1 to 100; got the number 2.5`, "an integer from 1 to 100"},
		{"limit", `{"a":1}`, `"limit" must be an integer from 1 to 100; got an object`, ""},
		{"mode", `"quick"`, `"mode" must be one of fast, slow; got the string "quick"`, "one of fast, slow"},
		{"tags", `["a","b","c"]`, `"tags" must have at most 2 item(s); got 3`, "a JSON array of strings with at most 2 item(s)"},
		{"tags", `["a",""]`, `"tags[1]" must be at least 1 character(s) long; got the string "", 0 character(s)`, "a string of at least 1 character(s)"},
		{"tags", `[1]`, `"tags[0]" must be a string of at least 1 character(s); got the number 1`, "a string of at least 1 character(s)"},
		{"price", `{"currency":"eur"}`, `"price.currency" must match the pattern ^[A-Z]{3}$; got the string "eur"`, "a string matching the pattern ^[A-Z]{3}$"},
		{"price", `{"minor":1}`, `"price" needs the field "currency". Example: {"currency":"..."}`, "a string matching the pattern ^[A-Z]{3}$"},
		{"price", `{"currency":"EUR","minr":1}`, `"price" has no field "minr"; its fields are currency, minor (did you mean "minor"?)`, `no field "minr": one of currency, minor`},
		{"price", `"EUR"`, `"price" must be a JSON object {currency, minor?}; got the string "EUR". Example: {"currency":"..."}`, ""},
		{"names", `{"http":true}`, `"names" must be a JSON array of strings (or that array JSON-encoded in a string); got an object. Example: ["..."]`, ""},
		{"mode", `"` + strings.Repeat("x", 100) + `"`, `"mode" must be one of fast, slow; got the string "` + strings.Repeat("x", 37) + `..."`, ""},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.value), &v); err != nil {
			t.Fatal(err)
		}
		faults := r.explain(tc.arg, s.Properties[tc.arg], v)
		if len(faults) != 1 {
			t.Errorf("%s = %s: %d faults, want 1: %+v", tc.arg, tc.value, len(faults), faults)
			continue
		}
		if got := faults[0].msg; got != tc.want {
			t.Errorf("%s = %s:\n got %s\nwant %s", tc.arg, tc.value, got, tc.want)
		}
		if got := faults[0].expected; tc.expected != "" && got != tc.expected {
			t.Errorf("%s = %s: expected %q, want %q", tc.arg, tc.value, got, tc.expected)
		}
		if strings.Contains(faults[0].msg, "map[") {
			t.Errorf("a Go map reaches the message: %s", faults[0].msg)
		}
	}
	// A value the schema takes has no fault.
	var ok any = map[string]any{"currency": "EUR", "minor": float64(5)}
	if faults := r.explain("price", s.Properties["price"], ok); len(faults) != 0 {
		t.Errorf("a valid value has faults: %+v", faults)
	}
}
