// Package jsonschemakw is the one table of JSON Schema keywords kubepact
// walks schemas by — which keywords hold subschemas, in what shape, and
// whether those apply to the instance itself — and a walker over the
// subschemas of one schema object. The OpenAPI → JSON Schema converter
// (internal/openapischema), the MCP tool-schema shaping (mcp) and the
// reference-cycle check (internal/schemacycle) all read it, so they agree
// on what is a schema and what is a value.
//
// It covers JSON Schema 2020-12 with the draft-04..2019-09 spellings
// OpenAPI documents still use (definitions, additionalItems, a tuple
// "items" array). It imports the standard library only.
package jsonschemakw

import (
	"iter"
	"maps"
	"slices"
)

// Shape says how a keyword's value holds subschemas.
type Shape int

// The shapes of keyword values.
const (
	// None: the value is not a schema (type, required, enum, a number…).
	None Shape = iota
	// One: the value is one schema (not, items, additionalProperties…).
	One
	// Map: the value is an object whose every member is a schema
	// (properties, $defs…).
	Map
	// List: the value is an array of schemas (allOf, prefixItems…).
	List
)

// Keyword describes one keyword that holds subschemas.
type Keyword struct {
	// Shape is how the value holds its subschemas.
	Shape Shape
	// InPlace: the subschemas apply to the same instance as the schema
	// holding them (allOf, not, if, dependentSchemas), so a chain of them
	// never moves into the instance. Otherwise they apply to a member or
	// an item of it, or ($defs, definitions) to nothing by themselves.
	InPlace bool
	// BoolIdiom: a boolean here reads as allowing nothing more (false) or
	// anything more (true), the idiom every client understands, so it is
	// kept as a boolean rather than spelled as a schema object.
	BoolIdiom bool
}

var keywords = map[string]Keyword{
	"allOf":       {Shape: List, InPlace: true},
	"anyOf":       {Shape: List, InPlace: true},
	"oneOf":       {Shape: List, InPlace: true},
	"prefixItems": {Shape: List},

	"not":  {Shape: One, InPlace: true},
	"if":   {Shape: One, InPlace: true},
	"then": {Shape: One, InPlace: true},
	"else": {Shape: One, InPlace: true},

	"items":                 {Shape: One},
	"contains":              {Shape: One},
	"propertyNames":         {Shape: One},
	"contentSchema":         {Shape: One},
	"additionalProperties":  {Shape: One, BoolIdiom: true},
	"additionalItems":       {Shape: One, BoolIdiom: true},
	"unevaluatedProperties": {Shape: One, BoolIdiom: true},
	"unevaluatedItems":      {Shape: One, BoolIdiom: true},

	"dependentSchemas":  {Shape: Map, InPlace: true},
	"properties":        {Shape: Map},
	"patternProperties": {Shape: Map},
	"$defs":             {Shape: Map},
	"definitions":       {Shape: Map},
}

// Lookup returns what keyword k holds; the zero Keyword (Shape None) for
// a keyword that holds no subschema.
func Lookup(k string) Keyword { return keywords[k] }

// data holds the keywords whose values are instances, never schemas,
// however much they look like one.
var data = map[string]bool{"enum": true, "const": true, "default": true, "examples": true, "example": true}

// IsData reports whether keyword k's value is an instance (enum, const,
// default, examples, OpenAPI's example), not a schema.
func IsData(k string) bool { return data[k] }

// Sub is one subschema found directly under a schema object.
type Sub struct {
	// Keyword is the keyword holding it.
	Keyword string
	// Name is its member name under a Map keyword; "" otherwise.
	Name string
	// Index is its position under a List keyword (or a tuple "items"
	// array); -1 otherwise.
	Index int
	// Value is the subschema: normally an object or a boolean, but under
	// a One keyword whatever the document holds.
	Value any
}

// Subschemas yields the subschemas directly under the schema object s,
// keywords and member names in sorted order, so a walk is deterministic.
// A Map or List keyword whose value has the wrong JSON type yields
// nothing; an "items" array yields its elements.
func Subschemas(s map[string]any) iter.Seq[Sub] {
	return func(yield func(Sub) bool) {
		for _, k := range slices.Sorted(maps.Keys(s)) {
			v := s[k]
			switch keywords[k].Shape {
			case One:
				if l, ok := v.([]any); ok && k == "items" {
					for i, sub := range l {
						if !yield(Sub{Keyword: k, Index: i, Value: sub}) {
							return
						}
					}
					continue
				}
				if !yield(Sub{Keyword: k, Index: -1, Value: v}) {
					return
				}
			case Map:
				m, _ := v.(map[string]any)
				for _, name := range slices.Sorted(maps.Keys(m)) {
					if !yield(Sub{Keyword: k, Name: name, Index: -1, Value: m[name]}) {
						return
					}
				}
			case List:
				l, _ := v.([]any)
				for i, sub := range l {
					if !yield(Sub{Keyword: k, Index: i, Value: sub}) {
						return
					}
				}
			}
		}
	}
}

// Rewrite replaces, in place, each subschema directly under s with what
// fn returns for it, in the order Subschemas yields them.
func Rewrite(s map[string]any, fn func(Sub) any) {
	for sub := range Subschemas(s) {
		v := fn(sub)
		switch {
		case sub.Name != "" || keywords[sub.Keyword].Shape == Map:
			s[sub.Keyword].(map[string]any)[sub.Name] = v
		case sub.Index >= 0:
			s[sub.Keyword].([]any)[sub.Index] = v
		default:
			s[sub.Keyword] = v
		}
	}
}
