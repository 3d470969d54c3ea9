package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/internal/jsonobj"
)

// rawTypeSchemas makes schema inference describe json.RawMessage as "any
// JSON value" instead of a byte string; the tool narrows it per field.
var rawTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {},
}

// argDecoder decodes a tool's raw arguments strictly: the arguments must be
// one JSON object; every name must be one the input schema declares
// (compared exactly, although encoding/json would match case-insensitively);
// required ones must be present; each value must satisfy its property schema.
// A JSON null counts as absent. Errors are *ToolError values that name the
// argument, list the accepted names and suggest the nearest one.
//
// The SDK's own validation is not used: it answers with free text, and the
// error envelope must be ours.
type argDecoder struct {
	accepted []string                        // sorted
	required []string                        // as declared
	props    map[string]*jsonschema.Resolved // one resolved schema per property
	// unmarshal decodes the checked arguments into the Go value; nil means
	// encoding/json. A family passes its own stricter decoder here.
	unmarshal func(json.RawMessage, any) error
}

// newArgDecoder checks arguments against s. With unmarshal set, values are
// checked only at the top level (type and enum): unmarshal, which knows the
// shape of structured values, checks inside them with better messages.
func newArgDecoder(s *jsonschema.Schema, unmarshal func(json.RawMessage, any) error) (*argDecoder, error) {
	if s == nil || s.Type != "object" {
		return nil, fmt.Errorf("input schema must have type object")
	}
	if s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
		return nil, fmt.Errorf("input schema must set additionalProperties: false")
	}
	d := &argDecoder{required: s.Required, props: map[string]*jsonschema.Resolved{}, unmarshal: unmarshal}
	for name, ps := range s.Properties {
		if unmarshal != nil {
			ps = &jsonschema.Schema{Type: ps.Type, Types: ps.Types, Enum: ps.Enum}
		}
		r, err := ps.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", name, err)
		}
		d.props[name] = r
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
		return d.argErr(CodeInvalidArgument, "", "arguments cannot be re-encoded: "+err.Error())
	}
	if d.unmarshal != nil {
		return d.unmarshal(clean, dst)
	}
	if err := json.Unmarshal(clean, dst); err != nil {
		// The schemas above should have caught every mismatch; this is the
		// backstop for a Go type stricter than its schema.
		field := ""
		if te, ok := err.(*json.UnmarshalTypeError); ok { //nolint:errorlint // Unmarshal returns it unwrapped
			field = te.Field
		}
		return d.argErr(CodeInvalidArgument, field, "argument does not fit: "+err.Error())
	}
	return nil
}

// check returns the arguments with nulls dropped, or the first error in a
// stable order: not an object, unknown names, missing required, bad values.
func (d *argDecoder) check(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			return nil, d.argErr(CodeInvalidArgument, "", "arguments must be one JSON object of named arguments")
		}
		// A map keeps the last of duplicated names, and other readers of the
		// same call (a proxy, an approval prompt) may keep the first: one
		// meaning per call, or none.
		if dup, ok := jsonobj.DuplicateKey(raw); ok {
			return nil, d.argErr(CodeInvalidArgument, dup, fmt.Sprintf("argument %q is given more than once", dup))
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
			e := d.argErr(CodeInvalidArgument, name, fmt.Sprintf("unknown argument %q", name))
			e.DidYouMean = suggest(name, d.accepted)
			return nil, e
		}
	}
	for _, name := range d.required {
		if _, ok := args[name]; !ok {
			return nil, d.argErr(CodeInvalidArgument, name, fmt.Sprintf("argument %q is required", name))
		}
	}
	for _, name := range names {
		var v any
		if err := json.Unmarshal(args[name], &v); err != nil {
			return nil, d.argErr(CodeInvalidArgument, name, fmt.Sprintf("argument %q is not valid JSON", name))
		}
		if err := d.props[name].Validate(v); err != nil {
			return nil, d.argErr(CodeInvalidArgument, name, fmt.Sprintf("argument %q: %s", name, cleanSchemaError(err)))
		}
	}
	return args, nil
}

func (d *argDecoder) argErr(code, field, msg string) *ToolError {
	return &ToolError{Code: code, Message: msg, Field: field, Accepted: slices.Clone(d.accepted)}
}

// cleanSchemaError drops the validator's location prefix: the field is
// reported separately.
func cleanSchemaError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "validating root: ")
	msg = strings.TrimPrefix(msg, "validating /: ")
	return msg
}

// suggest returns the accepted name nearest to name, or "" when none is
// close: names equal after dropping case and separators (dryRun, dry-run →
// dry_run) first, then a small edit distance, then a name that contains
// the given one.
func suggest(name string, accepted []string) string {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch r {
			case '_', '-', '.', ' ':
				return -1
			}
			return r
		}, strings.ToLower(s))
	}
	n := norm(name)
	if len(n) > 64 { // not a typo of any argument name; keeps the work bounded
		return ""
	}
	best, bestDist := "", -1
	for _, a := range accepted {
		na := norm(a)
		if na == n {
			return a
		}
		limit := max(1, min(len(n), len(na))/3)
		if d := editDistance(n, na); d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = a, d
		}
	}
	if best != "" || len(n) < 4 {
		return best
	}
	// A fragment of an accepted name (interfaces → add_interfaces) is a
	// likelier intent than nothing; the closest such name wins.
	for _, a := range accepted {
		na := norm(a)
		if d := editDistance(n, na); strings.Contains(na, n) && (bestDist < 0 || d < bestDist) {
			best, bestDist = a, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b, by
// bytes: insertions, deletions, substitutions and adjacent transpositions
// (naem → name) each cost one.
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}
