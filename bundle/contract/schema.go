package contract

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sync"
)

// Schema is the JSON Schema (draft 2020-12) of pacto.yaml for pactoVersion
// "2.0", written for kubepact from the field specification of the format.
// Every property carries a description, so the MCP server can serve it and
// explain single fields from it. Treat it as read-only.
//
//go:embed pacto-v2.0.schema.json
var Schema []byte

// SchemaID is the $id of Schema.
const SchemaID = "https://kubepact.dev/schema/pacto/v2.0"

// schemaTree decodes Schema once; see SchemaTree.
var schemaTree = sync.OnceValue(func() map[string]any {
	dec := json.NewDecoder(bytes.NewReader(Schema))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		panic("contract: the embedded schema is not JSON: " + err.Error()) // a build defect, caught by every test
	}
	return tree
})

// SchemaTree returns Schema decoded as a generic JSON tree (objects are
// map[string]any, arrays []any, numbers json.Number), decoded once for
// the process: the schema validate compiles and the one authoring
// explains fields from. Every caller shares the tree, so none may modify
// it.
func SchemaTree() map[string]any { return schemaTree() }
