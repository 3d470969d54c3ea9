package main

import (
	"encoding/json"
)

// extractParamHeaderAnnotations is spliced over the go-sdk's
// (mcp/streamable_headers.go), which its server runs on every tools/call
// it reads (to check the Mcp-Param headers against the arguments) and its
// client on every tools/call it sends for a tool it has listed. Upstream
// re-encodes the tool's input schema, decodes all of it into property
// maps and walks them, a dozen objects or more a call, to find that the
// schema has no x-mcp-header annotation: the case of almost every tool.
//
// Here the schema is encoded as upstream encodes it, and when the JSON
// holds no "x-mcp-header" and no \u escape (through which a name could
// spell it) no property can carry an annotation, and the answer is
// upstream's for such a schema: none. Anything else decodes and walks as
// upstream does, from the same bytes.
func extractParamHeaderAnnotations(tool *Tool) []paramHeaderBinding {
	data, err := json.Marshal(tool.InputSchema)
	if err != nil || !containsBytes(data, "x-mcp-header") && !containsBytes(data, `\u`) {
		return nil
	}
	var s headerSchemaProperty
	if err := internaljson.Unmarshal(data, &s); err != nil || len(s.Properties) == 0 {
		return nil
	}
	var result []paramHeaderBinding
	result = collectParamHeaderAnnotations(s.Properties, nil, result)
	if len(result) == 0 {
		return nil
	}
	return result
}

// containsBytes reports whether s occurs in b, without the copy a
// conversion of b to a string could make.
func containsBytes(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}
