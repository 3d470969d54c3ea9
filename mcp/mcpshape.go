package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kubepact/kubepact/internal/jsonschemakw"
)

// A schema that every MCP client accepts.
//
// JSON Schema 2020-12 allows a boolean wherever a schema goes (true: any
// value, false: none), and schema inference writes an unconstrained field —
// a response body, a json.RawMessage argument — as true. The MCP schema
// (Tool.inputSchema and Tool.outputSchema, 2025-11-25 and 2026-07-28) is
// narrower: the root is {type: "object", properties?: {NAME: object},
// required?}, and clients enforce it. The TypeScript SDK client refuses the
// whole tools/list answer over one "properties": {"body": true}, so its users
// see no tool at all.
//
// mcpShape is the one step that makes a tool's schema fit, applied where
// tools are handed to the SDK: the root gets type "object"; every boolean
// subschema becomes the object that means the same ({} for true, {"not": {}}
// for false), except under additionalProperties, additionalItems,
// unevaluatedProperties and unevaluatedItems (jsonschemakw's BoolIdiom),
// where "false" is the idiom every client reads and the MCP schema asks
// for nothing else. Values that
// are not schemas (const, enum, default, examples, extensions) are left as
// they are, numbers keep their exact text, and 2020-12 semantics are kept.

// mcpShape returns the tool schema raw in the shape the MCP schema types
// (see above). It fails only when raw is not a JSON object.
func mcpShape(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a tool schema must be a JSON object, not %s", bytes.TrimSpace(raw[:min(len(raw), 16)]))
	}
	shapeSchema(obj)
	// A tool's arguments and result are always one object: the MCP schema
	// has the literal "object" here, which ["null", "object"] is not.
	obj["type"] = "object"
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// shapeSchema rewrites the subschemas of one schema object in place.
func shapeSchema(s map[string]any) {
	jsonschemakw.Rewrite(s, func(sub jsonschemakw.Sub) any {
		return shapeSub(sub.Value, jsonschemakw.Lookup(sub.Keyword).BoolIdiom)
	})
}

// shapeSub returns one subschema in object form (a boolean kept only when
// keepBool), its own subschemas rewritten.
func shapeSub(v any, keepBool bool) any {
	switch v := v.(type) {
	case bool:
		if keepBool {
			return v
		}
		if v {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	case map[string]any:
		shapeSchema(v)
	}
	return v
}
