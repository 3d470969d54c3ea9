package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/internal/schemamsg"
)

// This file writes the messages of argument faults for the agent, from
// the schema and the value: what was wrong, what is accepted and, where a
// shape is involved, an example. The schema validator decides whether a
// value is accepted; these messages never repeat its text (which prints
// Go values such as map[http:true]) nor a Go value.

// fault is one thing wrong with a value at path.
type fault struct {
	path string // the argument, or a path into it (add_interfaces[1].type)
	msg  string
	// didYouMean is the nearest accepted field name, for unknown fields.
	didYouMean string
	// expected says what the schema at path accepts, bounds included ("an
	// integer from 1 to 100"), for a diagnostic's expected.
	expected string
}

// schemaReader reads schemas for messages, following local $refs into
// the input schema's $defs.
type schemaReader struct {
	defs map[string]*jsonschema.Schema
}

// deref follows s's $ref chain ("#/$defs/Name"), at most a few hops; it
// returns s itself when it has no $ref it can follow.
func (r schemaReader) deref(s *jsonschema.Schema) *jsonschema.Schema {
	for range 8 {
		if s == nil || s.Ref == "" {
			return s
		}
		name, ok := strings.CutPrefix(s.Ref, "#/$defs/")
		if !ok || r.defs[name] == nil {
			return s
		}
		s = r.defs[name]
	}
	return s
}

// explain returns the faults of v against s, or none when this package's
// reading of s finds nothing (the validator may still refuse v; the
// caller then says what s accepts). Each fault says what the schema at its
// path accepts.
func (r schemaReader) explain(path string, s *jsonschema.Schema, v any) []fault {
	fs := r.explainAt(path, s, v)
	for i := range fs {
		if fs[i].expected == "" && fs[i].path == path {
			fs[i].expected = r.describeSchema(s)
		}
	}
	return fs
}

func (r schemaReader) explainAt(path string, s *jsonschema.Schema, v any) []fault {
	if s != nil && s.Ref != "" {
		// A $ref and its siblings both apply (2020-12): the target first,
		// then the siblings on their own.
		target := r.deref(s)
		if target == s {
			return nil
		}
		if fs := r.explain(path, target, v); len(fs) > 0 {
			return fs
		}
		siblings := *s
		siblings.Ref = ""
		s = &siblings
	}
	if s == nil {
		return nil
	}
	if isFalse(s) {
		return []fault{{path: path, msg: fmt.Sprintf("%q is not allowed: its schema accepts no value there", path)}}
	}
	for _, sub := range s.AllOf { // every one applies
		if fs := r.explain(path, sub, v); len(fs) > 0 {
			return fs
		}
	}
	if types := typesOf(s); len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) }) {
		return []fault{{path: path, msg: fmt.Sprintf("%q must be %s; got %s", path, r.describeSchema(s), describeValue(v)) + r.exampleSuffix(s)}}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return sameJSON(e, v) }) {
		return []fault{{path: path, msg: fmt.Sprintf("%q must be one of %s; got %s", path, enumList(s.Enum), describeValue(v))}}
	}
	if s.Const != nil && !sameJSON(*s.Const, v) {
		want, err := json.Marshal(*s.Const)
		if err != nil {
			want = []byte("the one value its schema gives")
		}
		return []fault{{path: path, msg: fmt.Sprintf("%q must be %s; got %s", path, want, describeValue(v))}}
	}
	switch x := v.(type) {
	case string:
		return explainString(path, s, x)
	case float64:
		return explainNumber(path, s, x)
	case json.Number:
		f, _ := x.Float64()
		return explainNumber(path, s, f)
	case []any:
		return r.explainArray(path, s, x)
	case map[string]any:
		return r.explainObject(path, s, x)
	}
	return nil
}

func explainString(path string, s *jsonschema.Schema, x string) []fault {
	n := utf8.RuneCountInString(x)
	switch {
	case s.MinLength != nil && n < *s.MinLength:
		return []fault{{path: path, msg: fmt.Sprintf("%q must be at least %d character(s) long; got %s, %d character(s)", path, *s.MinLength, describeValue(x), n)}}
	case s.MaxLength != nil && n > *s.MaxLength:
		return []fault{{path: path, msg: fmt.Sprintf("%q must be at most %d character(s) long; got %d character(s)", path, *s.MaxLength, n)}}
	case s.Pattern != "":
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
			return []fault{{path: path, msg: fmt.Sprintf("%q must match the pattern %s; got %s", path, s.Pattern, describeValue(x))}}
		}
	}
	return nil
}

func explainNumber(path string, s *jsonschema.Schema, f float64) []fault {
	bound := func(op string, b float64) []fault {
		return []fault{{path: path, msg: fmt.Sprintf("%q must be %s %s; got %s", path, op, formatNumber(b), formatNumber(f))}}
	}
	switch {
	case s.Minimum != nil && f < *s.Minimum:
		return bound("at least", *s.Minimum)
	case s.Maximum != nil && f > *s.Maximum:
		return bound("at most", *s.Maximum)
	case s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum:
		return bound("greater than", *s.ExclusiveMinimum)
	case s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum:
		return bound("less than", *s.ExclusiveMaximum)
	case s.MultipleOf != nil && *s.MultipleOf > 0 && math.Abs(math.Remainder(f, *s.MultipleOf)) > 1e-9:
		return bound("a multiple of", *s.MultipleOf)
	}
	return nil
}

func (r schemaReader) explainArray(path string, s *jsonschema.Schema, x []any) []fault {
	switch {
	case s.MinItems != nil && len(x) < *s.MinItems:
		return []fault{{path: path, msg: fmt.Sprintf("%q must have at least %d item(s); got %d", path, *s.MinItems, len(x))}}
	case s.MaxItems != nil && len(x) > *s.MaxItems:
		return []fault{{path: path, msg: fmt.Sprintf("%q must have at most %d item(s); got %d", path, *s.MaxItems, len(x))}}
	}
	for i, item := range x {
		p := fmt.Sprintf("%s[%d]", path, i)
		var is *jsonschema.Schema
		if i < len(s.PrefixItems) {
			is = s.PrefixItems[i]
		} else {
			is = s.Items
		}
		if fs := r.explain(p, is, item); len(fs) > 0 {
			return fs
		}
	}
	return nil
}

func (r schemaReader) explainObject(path string, s *jsonschema.Schema, x map[string]any) []fault {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range x {
			if !yield(k) {
				return
			}
		}
	})
	// The fields s names, with those of its allOf members: what
	// unevaluatedProperties: false leaves allowed.
	known := map[string]bool{}
	for k := range s.Properties {
		known[k] = true
	}
	for _, sub := range s.AllOf {
		if sub = r.deref(sub); sub != nil {
			for k := range sub.Properties {
				known[k] = true
			}
		}
	}
	accepted := slices.Sorted(maps.Keys(known))
	closed := (s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil) ||
		(s.UnevaluatedProperties != nil && isFalse(s.UnevaluatedProperties))
	for _, k := range keys {
		if known[k] || !closed {
			continue
		}
		p := path + "." + k
		f := fault{path: p, msg: fmt.Sprintf("%q has no field %q; its fields are %s", path, k, orNothing(accepted)), expected: "no field " + strconv.Quote(k) + ": one of " + orNothing(accepted)}
		if dym := suggest(k, accepted); dym != "" {
			f.didYouMean = dym
			f.msg += fmt.Sprintf(" (did you mean %q?)", dym)
		}
		return []fault{f}
	}
	for _, req := range s.Required {
		if _, ok := x[req]; !ok {
			return []fault{{path: path + "." + req, msg: fmt.Sprintf("%q needs the field %q", path, req) + r.exampleSuffix(s), expected: r.describeSchema(s.Properties[req])}}
		}
	}
	for _, k := range keys {
		if fs := r.explain(path+"."+k, s.Properties[k], x[k]); len(fs) > 0 {
			return fs
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Not == nil && s.Properties[k] == nil {
			if fs := r.explain(path+"."+k, ap, x[k]); len(fs) > 0 {
				return fs
			}
		}
	}
	return nil
}

// isFalse reports whether s is the schema false (it accepts no value),
// which jsonschema-go reads as {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil {
		return false
	}
	raw, err := json.Marshal(s.Not)
	return err == nil && (string(raw) == "{}" || string(raw) == "true")
}

func typesOf(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		switch v.(type) {
		case float64, json.Number:
			return true
		}
	case "integer":
		switch x := v.(type) {
		case float64:
			return x == math.Trunc(x) && !math.IsInf(x, 0)
		case json.Number:
			_, err := x.Int64()
			if err == nil {
				return true
			}
			f, err := x.Float64()
			return err == nil && f == math.Trunc(f)
		}
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

// describeSchema says in words what s accepts: "a string", "one of a, b",
// "a JSON array of objects {name, type, visibility?} (or that array
// JSON-encoded in a string)".
func (r schemaReader) describeSchema(s *jsonschema.Schema) string {
	s = r.deref(s)
	if s == nil {
		return "any JSON value"
	}
	if len(s.Enum) > 0 {
		return "one of " + enumList(s.Enum)
	}
	if s.Const != nil {
		if raw, err := json.Marshal(*s.Const); err == nil {
			return "exactly " + string(raw)
		}
	}
	types := typesOf(s)
	encoded := len(types) == 2 && slices.Contains(types, "string") && (slices.Contains(types, "array") || slices.Contains(types, "object"))
	var parts []string
	for _, t := range types {
		if encoded && t == "string" {
			continue
		}
		parts = append(parts, r.describeType(t, s))
	}
	if len(parts) == 0 {
		return "any JSON value"
	}
	out := strings.Join(parts, " or ")
	if encoded {
		what := "object"
		if slices.Contains(types, "array") {
			what = "array"
		}
		out += " (or that " + what + " JSON-encoded in a string)"
	}
	return out
}

func (r schemaReader) describeType(t string, s *jsonschema.Schema) string {
	switch t {
	case "array":
		out := "a JSON array"
		if s.Items != nil {
			out += " of " + r.plural(s.Items)
		}
		return out + span(" with ", s.MinItems, s.MaxItems, "item(s)")
	case "object":
		if len(s.Properties) == 0 {
			return "a JSON object"
		}
		return "a JSON object " + fieldList(s)
	case "integer":
		return "an integer" + numberBounds(s)
	case "number":
		return "a number" + numberBounds(s)
	case "string":
		out := "a string" + span(" of ", s.MinLength, s.MaxLength, "character(s)")
		if s.Pattern != "" {
			out += " matching the pattern " + s.Pattern
		}
		return out
	case "null":
		return "null"
	}
	return schemamsg.WithArticle(t)
}

// span says a count's bounds: " of 1 to 64 character(s)", " with at most 5
// item(s)"; "" when there are none.
func span(prep string, lo, hi *int, unit string) string {
	if lo != nil && *lo == 0 {
		lo = nil
	}
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return fmt.Sprintf("%sexactly %d %s", prep, *lo, unit)
	case lo != nil && hi != nil:
		return fmt.Sprintf("%s%d to %d %s", prep, *lo, *hi, unit)
	case lo != nil:
		return fmt.Sprintf("%sat least %d %s", prep, *lo, unit)
	case hi != nil:
		return fmt.Sprintf("%sat most %d %s", prep, *hi, unit)
	}
	return ""
}

// numberBounds says a number's bounds: " from 1 to 100", " greater than 0",
// " at most 10, a multiple of 5"; "" when there are none.
func numberBounds(s *jsonschema.Schema) string {
	var lo, hi string
	switch {
	case s.ExclusiveMinimum != nil:
		lo = "greater than " + formatNumber(*s.ExclusiveMinimum)
	case s.Minimum != nil:
		lo = formatNumber(*s.Minimum)
	}
	switch {
	case s.ExclusiveMaximum != nil:
		hi = "less than " + formatNumber(*s.ExclusiveMaximum)
	case s.Maximum != nil:
		hi = formatNumber(*s.Maximum)
	}
	var out string
	switch {
	case s.Minimum != nil && s.Maximum != nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil:
		out = " from " + lo + " to " + hi
	case lo != "" && hi != "":
		out = " " + atLeast(lo) + " and " + atMost(hi)
	case lo != "":
		out = " " + atLeast(lo)
	case hi != "":
		out = " " + atMost(hi)
	}
	if s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil && (lo == "") != (hi == "") {
		out = " of" + out // "an integer of at least 1"
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		if out != "" {
			out += ","
		}
		out += " a multiple of " + formatNumber(*s.MultipleOf)
	}
	return out
}

// atLeast and atMost word an inclusive bound; an exclusive one comes
// worded ("greater than 0").
func atLeast(b string) string {
	if strings.HasPrefix(b, "greater") {
		return b
	}
	return "at least " + b
}

func atMost(b string) string {
	if strings.HasPrefix(b, "less") {
		return b
	}
	return "at most " + b
}

// plural names the items of an array.
func (r schemaReader) plural(s *jsonschema.Schema) string {
	s = r.deref(s)
	if len(s.Enum) > 0 {
		return "values from " + enumList(s.Enum)
	}
	switch t := typesOf(s); {
	case len(t) == 1 && t[0] == "object" && len(s.Properties) > 0:
		return "objects " + fieldList(s)
	case len(t) == 1 && t[0] == "object":
		return "objects"
	case len(t) == 1 && t[0] == "array":
		return "arrays"
	case len(t) == 1:
		return t[0] + "s"
	}
	return "values"
}

// fieldList is {name, type, visibility?}: optional fields marked.
func fieldList(s *jsonschema.Schema) string {
	var names []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(s.Required, k) {
			k += "?"
		}
		names = append(names, k)
	}
	// Required fields first, as an example would write them.
	slices.SortStableFunc(names, func(a, b string) int {
		return boolInt(strings.HasSuffix(a, "?")) - boolInt(strings.HasSuffix(b, "?"))
	})
	return "{" + strings.Join(names, ", ") + "}"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// exampleSuffix is " Example: …" for structured values, where a shape is
// easier shown than said; "" for scalars.
func (r schemaReader) exampleSuffix(s *jsonschema.Schema) string {
	s = r.deref(s)
	types := typesOf(s)
	if !slices.Contains(types, "array") && !slices.Contains(types, "object") {
		return ""
	}
	ex, ok := r.example(s, 0)
	if !ok {
		return ""
	}
	raw, err := json.Marshal(ex)
	if err != nil {
		return ""
	}
	return ". Example: " + string(raw)
}

// example builds a small value s accepts: required fields only, the first
// enum value, placeholders for free text.
func (r schemaReader) example(s *jsonschema.Schema, depth int) (any, bool) {
	s = r.deref(s)
	if s == nil || depth > 4 {
		return nil, false
	}
	if len(s.Enum) > 0 {
		return s.Enum[0], true
	}
	types := typesOf(s)
	switch {
	case slices.Contains(types, "array"):
		item, ok := r.example(s.Items, depth+1)
		if !ok {
			return []any{}, true
		}
		return []any{item}, true
	case slices.Contains(types, "object"):
		out := map[string]any{}
		for _, req := range s.Required {
			v, ok := r.example(s.Properties[req], depth+1)
			if !ok {
				return nil, false
			}
			out[req] = v
		}
		if len(out) == 0 && len(s.Properties) > 0 {
			// Nothing required: show one field the object takes.
			first := slices.Sorted(func(yield func(string) bool) {
				for k := range s.Properties {
					if !yield(k) {
						return
					}
				}
			})[0]
			if v, ok := r.example(s.Properties[first], depth+1); ok {
				out[first] = v
			}
		}
		if len(out) == 0 {
			out["key"] = "value"
		}
		return out, true
	case slices.Contains(types, "string"):
		return "...", true
	case slices.Contains(types, "integer"), slices.Contains(types, "number"):
		return 1, true
	case slices.Contains(types, "boolean"):
		return true, true
	}
	return nil, false
}

// describeValue names v's JSON type and shows short scalars, never a Go
// rendering of a map or slice.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case string:
		if utf8.RuneCountInString(x) > 40 {
			x = string([]rune(x)[:37]) + "..."
		}
		return "the string " + strconv.Quote(x)
	case float64:
		return "the number " + formatNumber(x)
	case json.Number:
		return "the number " + x.String()
	case []any:
		return fmt.Sprintf("an array of %d item(s)", len(x))
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func enumList(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = compactJSON(v)
	}
	return strings.Join(parts, ", ")
}

func compactJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(raw)
}

func sameJSON(a, b any) bool {
	ra, err1 := json.Marshal(a)
	rb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ra, rb)
}

func orNothing(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
