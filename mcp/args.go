package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/internal/didyoumean"
	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// rawTypeSchemas makes schema inference describe json.RawMessage as "any
// JSON value" instead of a byte string; the tool narrows it per field.
var rawTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {},
}

// argDecoder is the one place where a tool's raw arguments are decoded and
// checked, for every family: the arguments must be one JSON object, each
// name given once; every name must be one the input schema declares
// (compared exactly, although encoding/json would match
// case-insensitively); required ones must be present; a structured
// argument declared as "array or string" ("object or string") may come as
// the JSON value or that value JSON-encoded in a string, and is handed on
// decoded; each value must satisfy its property schema. A JSON null counts
// as absent. Errors are *ToolError values with code INVALID_ARGUMENT that
// name the argument (or the path into it, add_interfaces[1].type), say
// what is accepted, suggest the nearest name of an unknown one and, for
// structured values, show an example (see argfaults.go).
//
// The SDK's own validation is not used: it answers with free text, and the
// error envelope must be ours.
type argDecoder struct {
	accepted []string                        // sorted
	required []string                        // as declared
	props    map[string]*jsonschema.Resolved // one resolved schema per property
	schemas  map[string]*jsonschema.Schema   // the same, unresolved, for messages
	schemaReader
	// encoded admits a structured argument ("array or string") as that
	// value JSON-encoded in a string. Off for generated tools, where a
	// string is a value of its own.
	encoded bool
}

// newArgDecoder checks arguments against s, which must be an object schema
// that admits no other property.
func newArgDecoder(s *jsonschema.Schema) (*argDecoder, error) {
	return newArgDecoderResolved(s, nil)
}

// newArgDecoderResolved is newArgDecoder with the properties' schemas
// already resolved (by the generated tools' projection), so a large
// bundle's schemas are resolved once, not twice; a property missing from
// resolved is resolved here.
func newArgDecoderResolved(s *jsonschema.Schema, resolved map[string]*jsonschema.Resolved) (*argDecoder, error) {
	if s == nil || s.Type != "object" {
		return nil, fmt.Errorf("input schema must have type object")
	}
	if s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
		return nil, fmt.Errorf("input schema must set additionalProperties: false")
	}
	d := &argDecoder{required: s.Required, props: map[string]*jsonschema.Resolved{}, schemas: map[string]*jsonschema.Schema{},
		schemaReader: schemaReader{defs: s.Defs}, encoded: true}
	for name, ps := range s.Properties {
		if r := resolved[name]; r != nil {
			d.props[name] = r
			d.schemas[name] = ps
			d.accepted = append(d.accepted, name)
			continue
		}
		whole := ps
		if len(s.Defs) > 0 { // a property's $refs point into the input schema's $defs
			whole = &jsonschema.Schema{AllOf: []*jsonschema.Schema{ps}, Defs: s.Defs}
		}
		r, err := whole.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", name, err)
		}
		d.props[name] = r
		d.schemas[name] = ps
		d.accepted = append(d.accepted, name)
	}
	sort.Strings(d.accepted)
	for _, name := range d.required {
		if _, ok := d.props[name]; !ok {
			return nil, fmt.Errorf("required property %s is not declared", name)
		}
	}
	return d, nil
}

// decode checks raw and decodes it into dst, a pointer to a struct whose
// json tags are the property names.
func (d *argDecoder) decode(raw json.RawMessage, dst any) error {
	args, err := d.check(raw)
	if err != nil {
		return err
	}
	clean, err := json.Marshal(args)
	if err != nil {
		return d.argErr("", "the arguments cannot be re-encoded: "+err.Error())
	}
	if err := json.Unmarshal(clean, dst); err != nil {
		// The schemas above should have caught every mismatch; this is the
		// backstop for a Go type stricter than its schema (authoring's
		// metadata refuses a duplicate key at any depth).
		field := ""
		if te, ok := err.(*json.UnmarshalTypeError); ok { //nolint:errorlint // Unmarshal returns it unwrapped
			field = te.Field
		} else {
			field, err = failingArg(args, dst)
		}
		if _, declared := d.schemas[field]; !declared {
			return d.argErr("", "the arguments do not fit what the tool takes: "+err.Error())
		}
		return d.argErr(field, fmt.Sprintf("argument %q does not fit what the tool takes: %s; it takes %s", field, err, d.describeSchema(d.schemas[field])))
	}
	return nil
}

// failingArg finds the argument that a type's own UnmarshalJSON refuses,
// by decoding each alone into a fresh value of dst's type.
func failingArg(args map[string]json.RawMessage, dst any) (string, error) {
	t := reflect.TypeOf(dst).Elem()
	names := slices.Sorted(maps.Keys(args))
	for _, name := range names {
		one, err := json.Marshal(map[string]json.RawMessage{name: args[name]})
		if err != nil {
			return name, err
		}
		if err := json.Unmarshal(one, reflect.New(t).Interface()); err != nil {
			return name, err
		}
	}
	return "", errors.New("no single argument is refused")
}

// check returns the arguments with nulls dropped and JSON-encoded
// structured values decoded, or the first error in a stable order: not an
// object, a duplicated name, unknown names, missing required, bad values.
func (d *argDecoder) check(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			e := d.argErr("", fmt.Sprintf("the arguments must be one JSON object of named arguments, e.g. {%q: ...}; got %s", firstOr(d.accepted, "name"), describeRaw(raw)))
			e.Accepted, e.argNames = slices.Clone(d.accepted), true
			return nil, e
		}
		// A map keeps the last of duplicated names, and other readers of the
		// same call (a proxy, an approval prompt) may keep the first: one
		// meaning per call, or none.
		if dup, ok := jsonobj.DuplicateKey(raw); ok {
			return nil, d.argErr(dup, fmt.Sprintf("argument %q is given more than once; give each argument once", dup))
		}
	}
	names := make([]string, 0, len(args))
	for name, v := range args {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(args, name)
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := d.props[name]; !ok {
			e := d.argErr(name, fmt.Sprintf("unknown argument %q", name))
			e.DidYouMean = suggest(name, d.accepted)
			e.Accepted, e.argNames = slices.Clone(d.accepted), true
			return nil, e
		}
	}
	for _, name := range d.required {
		if _, ok := args[name]; !ok {
			// The accepted names too: a required argument is often missing
			// because it was given under another name.
			e := d.argErr(name, fmt.Sprintf("argument %q is required: %s", name, d.describeSchema(d.schemas[name]))+d.exampleSuffix(d.schemas[name]))
			e.Accepted, e.argNames = slices.Clone(d.accepted), true
			return nil, e
		}
	}
	for _, name := range names {
		if f, ok := jsonobj.LongNumber(args[name]); ok {
			at := argPath(name, f.Path)
			return nil, d.argErr(at, fmt.Sprintf("the number at %s %s; nothing was done", at, f.Reason()))
		}
		var v any
		if err := json.Unmarshal(args[name], &v); err != nil {
			return nil, d.argErr(name, fmt.Sprintf("argument %q is not valid JSON", name))
		}
		s := d.schemas[name]
		if str, ok := v.(string); ok && d.encoded && encodedKind(s) != "" {
			inner, err := d.decodeEncoded(name, s, str)
			if err != nil {
				return nil, err
			}
			v, args[name] = inner, json.RawMessage(strings.TrimSpace(str))
		}
		if err := d.props[name].Validate(v); err != nil {
			faults := d.explain(name, s, v)
			if len(faults) == 0 {
				// The validator knows a rule explain does not read: say
				// what the argument takes instead of echoing it.
				return nil, d.argErr(name, fmt.Sprintf("argument %q does not match what it takes: %s; got %s", name, d.describeSchema(s), describeValue(v))+d.exampleSuffix(s))
			}
			e := d.argErr(faults[0].path, faults[0].msg)
			e.DidYouMean = faults[0].didYouMean
			return nil, e
		}
	}
	return args, nil
}

// encodedKind is "array" or "object" when s takes that kind or the same
// JSON-encoded in a string; "" otherwise.
func encodedKind(s *jsonschema.Schema) string {
	types := typesOf(s)
	if len(types) != 2 || !slices.Contains(types, "string") {
		return ""
	}
	for _, k := range []string{"array", "object"} {
		if slices.Contains(types, k) {
			return k
		}
	}
	return ""
}

// decodeEncoded decodes a structured argument given as a string; the
// string must hold JSON of the kind s takes.
func (d *argDecoder) decodeEncoded(name string, s *jsonschema.Schema, str string) (any, error) {
	kind := encodedKind(s)
	var v any
	given := strings.TrimSpace(str)
	if err := json.Unmarshal([]byte(given), &v); err != nil {
		return nil, &ToolError{Code: CodeInvalidArgument, Field: name,
			Message: fmt.Sprintf("%q must be %s; got %s, which does not hold valid JSON", name, d.describeSchema(s), describeValue(str)) + d.exampleSuffix(s)}
	}
	if !hasType(v, kind) {
		return nil, &ToolError{Code: CodeInvalidArgument, Field: name,
			Message: fmt.Sprintf("%q must be %s; got a string that holds %s", name, d.describeSchema(s), describeValue(v)) + d.exampleSuffix(s)}
	}
	return v, nil
}

func (d *argDecoder) argErr(field, msg string) *ToolError {
	return &ToolError{Code: CodeInvalidArgument, Message: msg, Field: field}
}

func firstOr(names []string, def string) string {
	if len(names) > 0 {
		return names[0]
	}
	return def
}

// describeRaw names the JSON type of raw arguments that are not an object.
func describeRaw(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "text that is not JSON"
	}
	return describeValue(v)
}

// argPath is the path of a place inside argument name: name itself, or
// name.field, name[0].
func argPath(name, inner string) string {
	switch {
	case inner == "":
		return name
	case inner[0] == '[':
		return name + inner
	}
	return name + "." + inner
}

// suggest returns the accepted name nearest to name, or "".
func suggest(name string, accepted []string) string { return didyoumean.Nearest(name, accepted) }

// checkAll checks a generated tool's arguments and reports every fault,
// one diagnostic each, instead of the first: an agent fixes a call to a
// service operation in one go. The values come back decoded with exact
// numbers (json.Number), nulls dropped, for invoke.Call.
func (d *argDecoder) checkAll(raw json.RawMessage) (map[string]any, []invoke.Diagnostic) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var typed map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if raw[0] != '{' || dec.Decode(&typed) != nil || dec.More() {
		return nil, []invoke.Diagnostic{{Code: invoke.DiagNotAnObject, Expected: "a JSON object of named arguments",
			Message: "the arguments must be one JSON object of named arguments; got " + describeRaw(raw)}}
	}
	// A map keeps the last of duplicated names, and other readers of the
	// same call (a proxy, an approval prompt) may keep the first.
	// A map with as many names as the object has members has none: the
	// count is one scan of the bytes, the search a tokenizer's pass.
	if topMembers(raw) != len(typed) {
		if dup, ok := jsonobj.DuplicateKey(raw); ok {
			return nil, []invoke.Diagnostic{{Field: dup, Code: invoke.DiagDuplicate, Expected: "each argument once",
				Message: fmt.Sprintf("argument %q is given more than once; give each argument once", dup)}}
		}
	}
	// Exact numbers go to the service as written: one whose digits or
	// exponent no quantity needs is refused, before anything reads it.
	if f, ok := jsonobj.LongNumber(raw); ok {
		return nil, []invoke.Diagnostic{{Field: f.Path, Code: invoke.DiagInvalidValue,
			Expected: fmt.Sprintf("a number of at most %d digits and an exponent of at most ±%d", jsonobj.MaxNumberDigits, jsonobj.MaxNumberExponent),
			Message:  fmt.Sprintf("the number at %s %s", f.Path, f.Reason())}}
	}
	names := make([]string, 0, len(typed))
	for name, v := range typed {
		if v == nil {
			delete(typed, name)
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var diags []invoke.Diagnostic
	for _, name := range names {
		if _, ok := d.props[name]; !ok {
			dg := invoke.Diagnostic{Field: name, Code: invoke.DiagUnknown, Expected: "one of: " + orNothing(d.accepted),
				Message: fmt.Sprintf("unknown argument %q", name), DidYouMean: suggest(name, d.accepted)}
			if dg.DidYouMean != "" {
				dg.Message += fmt.Sprintf(" (did you mean %q?)", dg.DidYouMean)
			}
			diags = append(diags, dg)
		}
	}
	for _, name := range d.required {
		if _, ok := typed[name]; !ok {
			s := d.schemas[name]
			diags = append(diags, invoke.Diagnostic{Field: name, Code: invoke.DiagRequired, Expected: d.describeSchema(s),
				Message: fmt.Sprintf("argument %q is required", name) + d.exampleSuffix(s)})
		}
	}
	for _, name := range names {
		r, ok := d.props[name]
		if !ok {
			continue
		}
		// The validator reads float64s; the service gets the exact number.
		// A string or a boolean reads the same either way (a decoded
		// string is valid UTF-8, so re-encoding it changes nothing), and
		// most arguments are one: only the rest go through JSON again.
		var v any
		switch x := typed[name].(type) {
		case string, bool:
			v = x
		default:
			// decoded, not v, is what Unmarshal's pointer sends to the
			// heap: a string or a boolean costs no object here.
			var decoded any
			if plain, err := json.Marshal(x); err != nil || json.Unmarshal(plain, &decoded) != nil {
				diags = append(diags, invoke.Diagnostic{Field: name, Code: invoke.DiagInvalidValue, Message: fmt.Sprintf("argument %q is not a JSON value this server can read", name)})
				continue
			}
			v = decoded
		}
		if openapitools.TooDeep(v) {
			diags = append(diags, invoke.Diagnostic{Field: name, Code: invoke.DiagInvalidValue, Expected: d.describeSchema(d.schemas[name]),
				Message: fmt.Sprintf("argument %q is nested deeper than %d levels of objects and arrays", name, openapitools.MaxArgumentDepth)})
			continue
		}
		if err := r.Validate(v); err != nil {
			s := d.schemas[name]
			dg := invoke.Diagnostic{Field: name, Code: invoke.DiagInvalidValue, Expected: d.describeSchema(s),
				Message: fmt.Sprintf("argument %q does not match what it takes; got %s", name, describeValue(v))}
			if faults := d.explain(name, s, v); len(faults) > 0 {
				dg.Field, dg.Message, dg.DidYouMean = faults[0].path, faults[0].msg, faults[0].didYouMean
				if faults[0].expected != "" { // what the failing part accepts, its bounds included
					dg.Expected = faults[0].expected
				}
			}
			diags = append(diags, dg)
		}
	}
	if len(diags) > 0 {
		return nil, diags
	}
	return typed, nil
}

// expecting gives the diagnostics of what invoke.Call refused (what only
// the request shows) the expectation this decoder writes for their
// argument, so every diagnostic of a tool says what is accepted in the
// same words; a rule of the request's own (a header without line breaks)
// keeps its expectation.
func (d *argDecoder) expecting(diags []invoke.Diagnostic) []invoke.Diagnostic {
	for i, dg := range diags {
		arg := dg.Field
		if _, ok := d.schemas[arg]; !ok { // a path into the body: body.price.currency
			arg, _, _ = strings.Cut(arg, ".")
			arg, _, _ = strings.Cut(arg, "[")
		}
		if s, ok := d.schemas[arg]; ok && (dg.Expected == "" || dg.Code == invoke.DiagRequestInvalid) {
			diags[i].Expected = d.describeSchema(s)
		}
	}
	return diags
}

// topMembers counts the members of the JSON object that raw begins with,
// duplicates included. raw must begin with one valid JSON object (the
// caller has decoded it); bytes after that object are not read.
func topMembers(raw []byte) int {
	members, depth, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
			if depth == 1 && members == 0 {
				members = 1 // the first key
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return members
			}
		case c == ',' && depth == 1:
			members++
		}
	}
	return members
}
