package grpctools

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// schemaMode says which side of a call a schema describes: the proto3
// JSON mapping accepts more on input than it prints on output (64-bit
// integers as a number or a string, printed as a string).
type schemaMode int

const (
	inputMode schemaMode = iota
	outputMode
)

// maxOneofPairs bounds the "at most one of" rules written for one oneof
// (they grow with the square of its fields); a larger oneof is described
// in words only and the service's decoding enforces it.
const maxOneofPairs = 64

// Well-known type names the proto3 JSON mapping prints specially.
const (
	wktAny       = "google.protobuf.Any"
	wktTimestamp = "google.protobuf.Timestamp"
	wktDuration  = "google.protobuf.Duration"
	wktStruct    = "google.protobuf.Struct"
	wktValue     = "google.protobuf.Value"
	wktList      = "google.protobuf.ListValue"
	wktFieldMask = "google.protobuf.FieldMask"
	wktEmpty     = "google.protobuf.Empty"
	wktNullValue = "google.protobuf.NullValue"
)

// unsupportedError is a message a tool cannot describe truthfully.
type unsupportedError struct{ reason string }

func (e *unsupportedError) Error() string { return e.reason }

// schemaBuilder converts message descriptors to JSON Schema 2020-12 under
// the proto3 JSON mapping. A message met again inside itself (a recursive
// message) is not expanded a second time: there it is "an object", and the
// proto decoding checks its fields.
type schemaBuilder struct {
	mode  schemaMode
	stack []protoreflect.FullName
	// nodes counts the schema objects written, bounded by maxNodes.
	nodes, maxNodes int
}

func newSchemaBuilder(mode schemaMode) *schemaBuilder {
	return &schemaBuilder{mode: mode, maxNodes: 20000}
}

// message is the schema of a message as a JSON object.
func (b *schemaBuilder) message(md protoreflect.MessageDescriptor) (map[string]any, error) {
	if s, ok, err := b.wellKnown(md); ok || err != nil {
		return s, err
	}
	b.nodes++
	if b.nodes > b.maxNodes {
		return nil, &unsupportedError{fmt.Sprintf("message %s: its schema would exceed %d nodes", md.FullName(), b.maxNodes)}
	}
	if slices.Contains(b.stack, md.FullName()) {
		return map[string]any{
			"type":        "object",
			"description": fmt.Sprintf("a %s message (recursive: its fields are as described above)", md.FullName()),
		}, nil
	}
	b.stack = append(b.stack, md.FullName())
	defer func() { b.stack = b.stack[:len(b.stack)-1] }()

	props := map[string]any{}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		s, err := b.field(fd)
		if err != nil {
			return nil, err
		}
		props[fd.JSONName()] = s
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if d := comments(md); d != "" {
		s["description"] = d
	}
	var rules []any
	var words []string
	oneofs := md.Oneofs()
	for i := range oneofs.Len() {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		var names []string
		for j := range od.Fields().Len() {
			names = append(names, od.Fields().Get(j).JSONName())
		}
		words = append(words, fmt.Sprintf("oneof %s: set at most one of %s", od.Name(), strings.Join(names, ", ")))
		if len(names)*(len(names)-1)/2 > maxOneofPairs {
			continue
		}
		for x := range names {
			for y := x + 1; y < len(names); y++ {
				rules = append(rules, map[string]any{"not": map[string]any{"required": []string{names[x], names[y]}}})
			}
		}
	}
	if len(words) > 0 {
		d, _ := s["description"].(string)
		s["description"] = strings.TrimSpace(d + "\n" + strings.Join(words, "; "))
	}
	if len(rules) > 0 && b.mode == inputMode {
		s["allOf"] = rules
	}
	return s, nil
}

// field is the schema of one field's JSON value.
func (b *schemaBuilder) field(fd protoreflect.FieldDescriptor) (map[string]any, error) {
	var (
		s   map[string]any
		err error
	)
	switch {
	case fd.IsMap():
		v, err := b.single(fd.MapValue())
		if err != nil {
			return nil, err
		}
		s = map[string]any{"type": "object", "additionalProperties": v}
		if p := mapKeyPattern(fd.MapKey().Kind()); p != "" {
			s["propertyNames"] = map[string]any{"pattern": p}
		}
	case fd.IsList():
		item, err := b.single(fd)
		if err != nil {
			return nil, err
		}
		s = map[string]any{"type": "array", "items": item}
	default:
		s, err = b.single(fd)
		if err != nil {
			return nil, err
		}
	}
	if d := comments(fd); d != "" {
		s = withDescription(s, d)
	}
	return s, nil
}

// single is the schema of one value of fd's type.
func (b *schemaBuilder) single(fd protoreflect.FieldDescriptor) (map[string]any, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return map[string]any{"type": "boolean"}, nil
	case protoreflect.StringKind:
		return map[string]any{"type": "string"}, nil
	case protoreflect.BytesKind:
		return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return map[string]any{"type": "integer", "minimum": -1 << 31, "maximum": 1<<31 - 1}, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return map[string]any{"type": "integer", "minimum": 0, "maximum": 1<<32 - 1}, nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return b.int64Schema(true), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return b.int64Schema(false), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return floatSchema(), nil
	case protoreflect.EnumKind:
		return enumSchema(fd.Enum()), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.message(fd.Message())
	}
	return nil, &unsupportedError{fmt.Sprintf("field %s: kind %s has no JSON mapping", fd.FullName(), fd.Kind())}
}

// int64Schema: the mapping prints 64-bit integers as decimal strings and
// reads a string or a number; a tool asks for the string (a JSON number
// past 2^53 loses digits in most clients).
func (b *schemaBuilder) int64Schema(signed bool) map[string]any {
	p := `^[0-9]+$`
	what := "an unsigned 64-bit integer as a decimal string"
	if signed {
		p = `^-?[0-9]+$`
		what = "a 64-bit integer as a decimal string"
	}
	return map[string]any{"type": "string", "pattern": p, "description": what}
}

func floatSchema() map[string]any {
	return map[string]any{"anyOf": []any{
		map[string]any{"type": "number"},
		map[string]any{"type": "string", "enum": []string{"NaN", "Infinity", "-Infinity"}},
	}}
}

func enumSchema(ed protoreflect.EnumDescriptor) map[string]any {
	if ed.FullName() == wktNullValue {
		return map[string]any{"type": "null"}
	}
	var names []string
	vals := ed.Values()
	for i := range vals.Len() {
		names = append(names, string(vals.Get(i).Name()))
	}
	s := map[string]any{"type": "string", "enum": names}
	if d := comments(ed); d != "" {
		s["description"] = d
	}
	return s
}

// mapKeyPattern is the pattern of a map's JSON keys, which are strings
// whatever the key type.
func mapKeyPattern(k protoreflect.Kind) string {
	switch k {
	case protoreflect.BoolKind:
		return `^(true|false)$`
	case protoreflect.StringKind:
		return ""
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return `^[0-9]+$`
	default:
		return `^-?[0-9]+$`
	}
}

// wellKnown is the schema of a well-known type the mapping prints in a
// form of its own; ok is false for any other message.
func (b *schemaBuilder) wellKnown(md protoreflect.MessageDescriptor) (map[string]any, bool, error) {
	name := md.FullName()
	switch name {
	case wktTimestamp:
		return map[string]any{"type": "string", "format": "date-time", "description": "an RFC 3339 timestamp, e.g. 2026-01-02T15:04:05Z"}, true, nil
	case wktDuration:
		return map[string]any{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]{1,9})?s$`, "description": "a duration in seconds with an s suffix, e.g. 1.5s"}, true, nil
	case wktFieldMask:
		return map[string]any{"type": "string", "description": "field paths in lowerCamelCase, separated by commas, e.g. name,address.city"}, true, nil
	case wktStruct:
		return map[string]any{"type": "object"}, true, nil
	case wktList:
		return map[string]any{"type": "array"}, true, nil
	case wktValue:
		return map[string]any{"description": "any JSON value"}, true, nil
	case wktEmpty:
		return map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}, true, nil
	case wktAny:
		if b.mode == inputMode {
			return nil, true, &unsupportedError{"it takes a google.protobuf.Any, whose contents a tool cannot check against a schema"}
		}
		return map[string]any{"type": "object", "required": []string{"@type"}, "description": "a google.protobuf.Any: @type names the message the other members belong to"}, true, nil
	}
	if strings.HasPrefix(string(name), "google.protobuf.") && strings.HasSuffix(string(name), "Value") && md.Fields().Len() == 1 {
		// Wrappers (Int64Value, StringValue, …) print as their value.
		s, err := b.single(md.Fields().Get(0))
		return s, true, err
	}
	return nil, false, nil
}

func withDescription(s map[string]any, d string) map[string]any {
	if old, ok := s["description"].(string); ok && old != "" {
		d = d + " (" + old + ")"
	}
	s["description"] = d
	return s
}

// comments is the leading comment of a declaration, trimmed, or "".
func comments(d protoreflect.Descriptor) string {
	loc := d.ParentFile().SourceLocations().ByDescriptor(d)
	return strings.TrimSpace(loc.LeadingComments)
}
