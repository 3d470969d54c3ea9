package schemamsg

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestArticle(t *testing.T) {
	for noun, want := range map[string]string{
		"object": "an object", "array": "an array", "integer": "an integer",
		"string": "a string", "number": "a number", "boolean": "a boolean", "": "",
	} {
		if got := WithArticle(noun); got != want {
			t.Errorf("WithArticle(%q) = %q, want %q", noun, got, want)
		}
	}
	if got := Article(""); got != "a" {
		t.Errorf(`Article("") = %q, want "a"`, got)
	}
}

func TestJSONType(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{
		{nil, "null"}, {true, "boolean"}, {"x", "string"}, {1.5, "number"}, {json.Number("7"), "number"},
		{[]any{}, "array"}, {map[string]any{}, "object"}, {struct{}{}, ""}, {42, ""},
	} {
		if got := JSONType(tt.v); got != tt.want {
			t.Errorf("JSONType(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes: never split
		{"日本語", 4, "日…"},
		{"日本語", 0, "…"},
	} {
		got := Cut(tt.s, tt.n)
		if got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q is not valid UTF-8", tt.s, tt.n, got)
		}
	}
}
