package authoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/didyoumean"
)

// DecodeArgs decodes a tool call's arguments (a JSON object) into dst, a
// pointer to a struct whose json tags name the accepted arguments.
//
// It is strict where encoding/json is lenient: an unknown or duplicated key is
// an error listing the accepted names with a did-you-mean suggestion, a value
// of the wrong type is an error naming the argument, the expected type and
// what was given. Empty input and null mean "no arguments"; a null argument
// value means "absent". json.RawMessage fields receive the raw value
// unchecked: structured arguments are checked by the operation using them,
// which knows their shape.
//
// Every error is an *[Error] with Code [CodeInvalidArgument].
//
// The MCP server does not call it: package mcp decodes and checks every
// tool's arguments itself and passes the request with its structured
// fields already decoded to native JSON. It remains for Go callers.
func DecodeArgs(raw json.RawMessage, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("authoring.DecodeArgs: dst must be a non-nil pointer to a struct, got %T", dst)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil
	}
	return decodeObject("", trimmed, rv.Elem())
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// fieldsOf maps the accepted JSON names of struct type t to field indexes.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	byName := make(map[string]int, t.NumField())
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		byName[name] = i
		names = append(names, name)
	}
	slices.Sort(names)
	return byName, names
}

// label names a field for messages: top-level arguments by their own name,
// nested ones by their path (add_interfaces[0].type).
func label(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func noun(prefix string) string {
	if prefix == "" {
		return "argument"
	}
	return "field"
}

// decodeObject decodes the JSON object raw into the struct value v.
func decodeObject(prefix string, raw []byte, v reflect.Value) error {
	if len(raw) == 0 || raw[0] != '{' {
		what := "the arguments"
		if prefix != "" {
			what = prefix
		}
		return argError(prefix, fmt.Sprintf("%s must be a JSON object, got %s", what, describeJSON(raw)))
	}
	byName, names := fieldsOf(v.Type())
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the opening brace
		return argError(prefix, "malformed JSON: "+err.Error())
	}
	seen := map[string]bool{}
	var unknown []string
	type pending struct {
		key string
		val json.RawMessage
	}
	var fields []pending
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return argError(prefix, "malformed JSON: "+err.Error())
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return argError(label(prefix, key), "malformed JSON: "+err.Error())
		}
		if seen[key] {
			return argError(label(prefix, key), fmt.Sprintf("%s %q is given more than once", noun(prefix), label(prefix, key)))
		}
		seen[key] = true
		if _, ok := byName[key]; !ok {
			unknown = append(unknown, key)
			continue
		}
		fields = append(fields, pending{key, val})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return argError(prefix, "malformed JSON: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return argError(prefix, "malformed JSON: trailing data after the object")
	}
	if len(unknown) > 0 {
		return unknownNameError(prefix, unknown, names)
	}
	for _, p := range fields {
		if err := decodeValue(label(prefix, p.key), p.val, v.Field(byName[p.key])); err != nil {
			return err
		}
	}
	return nil
}

func unknownNameError(prefix string, unknown, accepted []string) *Error {
	e := &Error{Code: CodeInvalidArgument, Accepted: accepted}
	first := unknown[0]
	e.Field = label(prefix, first)
	var b strings.Builder
	if len(unknown) == 1 {
		fmt.Fprintf(&b, "unknown %s %q", noun(prefix), e.Field)
	} else {
		quoted := make([]string, len(unknown))
		for i, u := range unknown {
			quoted[i] = fmt.Sprintf("%q", label(prefix, u))
		}
		fmt.Fprintf(&b, "unknown %ss %s", noun(prefix), strings.Join(quoted, ", "))
	}
	if s := didYouMean(first, accepted); s != "" {
		e.DidYouMean = s
		fmt.Fprintf(&b, "; did you mean %q?", s)
	}
	where := "accepted arguments"
	if prefix != "" {
		where = "accepted fields of " + prefix
	}
	fmt.Fprintf(&b, " (%s: %s)", where, strings.Join(accepted, ", "))
	e.Message = b.String()
	return e
}

// decodeValue decodes one JSON value into v, whose type decides the rules.
func decodeValue(name string, raw json.RawMessage, v reflect.Value) error {
	if string(raw) == "null" {
		return nil // absent
	}
	t := v.Type()
	switch {
	case t == rawMessageType:
		v.SetBytes(bytes.Clone(raw))
		return nil
	case t.Kind() == reflect.Struct:
		return decodeObject(name, raw, v)
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		nv := reflect.New(t.Elem())
		if err := decodeObject(name, raw, nv.Elem()); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		var items []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return typeError(name, t, raw)
		}
		out := reflect.MakeSlice(t, len(items), len(items))
		for i, it := range items {
			item := fmt.Sprintf("%s[%d]", name, i)
			if string(it) == "null" {
				return argError(item, item+" must be an object, got null")
			}
			if err := decodeObject(item, it, out.Index(i)); err != nil {
				return err
			}
		}
		v.Set(out)
		return nil
	}
	nv := reflect.New(t)
	if err := json.Unmarshal(raw, nv.Interface()); err != nil {
		return typeError(name, t, raw)
	}
	v.Set(nv.Elem())
	return nil
}

func typeError(name string, t reflect.Type, raw []byte) *Error {
	return argError(name, fmt.Sprintf("%q must be %s, got %s", name, expectedType(t), describeJSON(raw)))
}

func expectedType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// describeJSON names the JSON type of raw and shows short scalar values.
func describeJSON(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	show := func(kind string) string {
		s := string(raw)
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		return kind + " (" + s + ")"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return show("a string")
	case 't', 'f':
		return show("a boolean")
	case 'n':
		return "null"
	default:
		return show("a number")
	}
}

// shape names the shape a structured argument accepts, for messages.
type shape struct {
	// list is true for a JSON array, false for a JSON object.
	list bool
	// what describes the items or members, e.g. "objects {name, type, visibility?}".
	what string
}

func (s shape) String() string {
	if s.list {
		return "a JSON array of " + s.what + " (or that array JSON-encoded in a string)"
	}
	return "a JSON object of " + s.what + " (or that object JSON-encoded in a string)"
}

// structured unwraps a structured argument: absent or null gives ok=false; a
// native array/object of the right kind is returned as is; a string is
// decoded once and must hold JSON of the right kind. Anything else is an
// error naming the field, what was given and what is accepted.
func structured(field string, raw json.RawMessage, s shape) (json.RawMessage, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	want := byte('{')
	if s.list {
		want = '['
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, false, argError(field, fmt.Sprintf("%q: malformed JSON string: %v", field, err))
		}
		given := bytes.TrimSpace([]byte(inner))
		if len(given) == 0 || given[0] != want || !json.Valid(given) {
			detail := "that does not hold valid JSON"
			if json.Valid(given) {
				detail = "that holds " + describeJSON(given)
			}
			return nil, false, argError(field, fmt.Sprintf("%q must be %s; got %s %s", field, s, describeJSON(raw), detail))
		}
		if err := checkArgumentSize(field, given); err != nil {
			return nil, false, err
		}
		return given, true, nil
	}
	if raw[0] != want {
		return nil, false, argError(field, fmt.Sprintf("%q must be %s; got %s", field, s, describeJSON(raw)))
	}
	if err := checkArgumentSize(field, raw); err != nil {
		return nil, false, err
	}
	return raw, true, nil
}

// decodeItems decodes a structured list argument of objects into []T.
func decodeItems[T any](field string, raw json.RawMessage, s shape) ([]T, bool, error) {
	inner, ok, err := structured(field, raw, s)
	if !ok || err != nil {
		return nil, ok, err
	}
	var out []T
	if err := decodeValue(field, inner, reflect.ValueOf(&out).Elem()); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// decodeNames decodes a structured list argument of non-empty strings.
func decodeNames(field string, raw json.RawMessage, s shape) ([]string, bool, error) {
	inner, ok, err := structured(field, raw, s)
	if !ok || err != nil {
		return nil, ok, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(inner, &items); err != nil {
		return nil, false, argError(field, fmt.Sprintf("%q must be %s: %v", field, s, err))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		var name string
		if json.Unmarshal(it, &name) != nil || strings.TrimSpace(name) == "" {
			return nil, false, argError(fmt.Sprintf("%s[%d]", field, i),
				fmt.Sprintf("%s[%d] must be a non-empty string, got %s", field, i, describeJSON(it)))
		}
		out = append(out, name)
	}
	return out, true, nil
}

// decodeMembers decodes a structured object argument, keeping key order.
func decodeMembers(field string, raw json.RawMessage, s shape) ([]member, bool, error) {
	inner, ok, err := structured(field, raw, s)
	if !ok || err != nil {
		return nil, ok, err
	}
	obj, err := parseOrdered(inner)
	if err != nil {
		return nil, false, argError(field, fmt.Sprintf("%q must be %s: %v", field, s, err))
	}
	members := obj.(*object).members
	for _, m := range members {
		if strings.TrimSpace(m.key) == "" {
			return nil, false, argError(field, fmt.Sprintf("%q has an empty key", field))
		}
	}
	return members, true, nil
}

// didYouMean returns the accepted name nearest to name, or "".
func didYouMean(name string, accepted []string) string { return didyoumean.Nearest(name, accepted) }
