package authoring

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/bundle/contract"
)

// FieldHelp explains one field of the contract schema.
type FieldHelp struct {
	// Path is the field's dotted path as normalised (e.g. "interfaces.type").
	Path string `json:"path"`
	// Type is the JSON type, e.g. "string" or "array of object".
	Type string `json:"type"`
	// Required says whether the enclosing object requires the field.
	Required bool `json:"required"`
	// AllowedValues lists the enum values, if the field is an enumeration.
	AllowedValues []any  `json:"allowedValues,omitempty"`
	Default       any    `json:"default,omitempty"`
	Format        string `json:"format,omitempty"`
	Pattern       string `json:"pattern,omitempty"`
	// Description is the field's meaning, from the schema.
	Description string `json:"description"`
	// Example is a value the field could take.
	Example any `json:"example,omitempty"`
	// Fields lists the child field names of an object (or of array items).
	Fields []string `json:"fields,omitempty"`
}

var indexSuffix = regexp.MustCompile(`\[\d*\]$`)

// ExplainField explains the schema field at a dotted path such as
// "state.persistence.durability". Array levels may be written plainly
// ("interfaces.type"), with "[]" or with an index ("interfaces[0].type").
// "" explains the top level. An unknown path is an INVALID_ARGUMENT error
// listing the valid names at the deepest level reached, with a did-you-mean.
func ExplainField(path string) (*FieldHelp, error) {
	doc := contract.SchemaTree()
	node := doc
	required := true
	var walked []string
	trimmed := strings.Trim(strings.TrimSpace(path), ".")
	var segs []string
	if trimmed != "" {
		segs = strings.Split(strings.ReplaceAll(trimmed, "/", "."), ".")
	}
	for _, seg := range segs {
		seg = indexSuffix.ReplaceAllString(seg, "")
		node = items(doc, node)
		if seg == "" || isIndex(seg) {
			continue
		}
		props, req := properties(doc, node)
		child, ok := props[seg]
		if !ok {
			accepted := slices.Sorted(mapKeys(props))
			where := "the top level"
			if len(walked) > 0 {
				where = strings.Join(walked, ".")
			}
			e := &Error{Code: CodeInvalidArgument, Field: "path", Accepted: accepted}
			if len(accepted) == 0 {
				e.Message = fmt.Sprintf("%q has no fields below %s (it is %s)", seg, where, typeName(doc, node))
				return nil, e
			}
			e.Message = fmt.Sprintf("unknown field %q under %s; fields there: %s", seg, where, strings.Join(accepted, ", "))
			if s := didYouMean(seg, accepted); s != "" {
				e.DidYouMean = s
				e.Message += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, e
		}
		required = slices.Contains(req, seg)
		node = resolveRef(doc, child)
		walked = append(walked, seg)
	}
	h := &FieldHelp{
		Path:        strings.Join(walked, "."),
		Type:        typeName(doc, node),
		Required:    required,
		Description: str(node["description"]),
		Format:      str(node["format"]),
		Pattern:     str(node["pattern"]),
		Default:     node["default"],
	}
	if enum, ok := node["enum"].([]any); ok {
		h.AllowedValues = enum
	} else if c, ok := node["const"]; ok {
		h.AllowedValues = []any{c}
	}
	if props, _ := properties(doc, items(doc, node)); len(props) > 0 {
		h.Fields = slices.Sorted(mapKeys(props))
	}
	h.Example = example(doc, node)
	return h, nil
}

func isIndex(s string) bool {
	return strings.Trim(s, "0123456789") == "" || s == "[]" || s == "*"
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func mapKeys(m map[string]map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// resolveRef follows local "#/$defs/..." references.
func resolveRef(doc, node map[string]any) map[string]any {
	for range 32 {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		target := doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			next, ok := target[part].(map[string]any)
			if !ok {
				return node
			}
			target = next
		}
		merged := map[string]any{}
		for k, v := range target {
			merged[k] = v
		}
		for k, v := range node { // sibling keywords (description) win
			if k != "$ref" {
				merged[k] = v
			}
		}
		node = merged
	}
	return node
}

// items steps from an array schema into its items; other nodes pass through.
func items(doc, node map[string]any) map[string]any {
	node = resolveRef(doc, node)
	if it, ok := node["items"].(map[string]any); ok && hasType(node, "array") {
		return resolveRef(doc, it)
	}
	return node
}

func hasType(node map[string]any, t string) bool {
	switch v := node["type"].(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

// properties collects the properties of node, including those declared in
// allOf/oneOf/anyOf branches, and the names the node requires.
func properties(doc, node map[string]any) (map[string]map[string]any, []string) {
	out := map[string]map[string]any{}
	var required []string
	var walk func(n map[string]any, depth int)
	walk = func(n map[string]any, depth int) {
		if depth > 8 {
			return
		}
		n = resolveRef(doc, n)
		if props, ok := n["properties"].(map[string]any); ok {
			for k, v := range props {
				if m, ok := v.(map[string]any); ok {
					if _, have := out[k]; !have || len(m) > len(out[k]) {
						out[k] = m
					}
				}
			}
		}
		if depth == 0 {
			if req, ok := n["required"].([]any); ok {
				for _, r := range req {
					required = append(required, str(r))
				}
			}
		}
		for _, kw := range []string{"allOf", "oneOf", "anyOf"} {
			if branches, ok := n[kw].([]any); ok {
				for _, b := range branches {
					if m, ok := b.(map[string]any); ok {
						walk(m, depth+1)
					}
				}
			}
		}
	}
	walk(node, 0)
	return out, required
}

func typeName(doc, node map[string]any) string {
	node = resolveRef(doc, node)
	var t string
	switch v := node["type"].(type) {
	case string:
		t = v
	case []any:
		parts := make([]string, 0, len(v))
		for _, p := range v {
			parts = append(parts, str(p))
		}
		t = strings.Join(parts, " or ")
	}
	if t == "array" {
		if it, ok := node["items"].(map[string]any); ok {
			return "array of " + typeName(doc, it)
		}
	}
	if t == "" {
		if _, ok := node["properties"]; ok {
			return "object"
		}
		return "any"
	}
	return t
}

// example picks a value from the schema: examples, default, the first enum
// value, or one synthesised from the type.
func example(doc, node map[string]any) any {
	if ex, ok := node["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	if d, ok := node["default"]; ok {
		return d
	}
	if enum, ok := node["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := node["const"]; ok {
		return c
	}
	switch typeName(doc, node) {
	case "boolean":
		return true
	case "integer":
		return 1
	case "string":
		if node["format"] == "date" {
			return "2099-12-31"
		}
		return "example"
	}
	return nil
}
