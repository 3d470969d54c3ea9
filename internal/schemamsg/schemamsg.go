// Package schemamsg holds the words every JSON-Schema fault sentence in
// kubepact is built from: the article before a type name, the JSON type of
// a decoded value, and how a long string is cut for display. The contract
// validator (bundle/validate), the payload validator (internal/payload),
// tool-argument faults (mcp) and authoring's argument checks use it, so a
// user reading two of them reads the same words.
//
// It imports the standard library only, so any package may use it.
package schemamsg

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Article returns the indefinite article for noun: "an" before a vowel
// letter (an array, an object, an integer), else "a".
func Article(noun string) string {
	if noun != "" && strings.IndexByte("aeiou", noun[0]) >= 0 {
		return "an"
	}
	return "a"
}

// WithArticle returns noun after its article ("an object", "a string");
// "" stays "".
func WithArticle(noun string) string {
	if noun == "" {
		return ""
	}
	return Article(noun) + " " + noun
}

// JSONType names the JSON type of a value decoded from JSON (with or
// without UseNumber): null, boolean, string, number, array or object; ""
// for a Go value JSON does not decode to.
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// Cut returns s shortened to at most n bytes, on a character boundary, and
// marked with "…" when anything was cut; s itself when it fits.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
