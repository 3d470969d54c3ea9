package contract

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of pacto.yaml for pactoVersion
// "2.0", written for kubepact from the field specification of the format.
// Every property carries a description, so the MCP server can serve it and
// explain single fields from it. Treat it as read-only.
//
//go:embed pacto-v2.0.schema.json
var Schema []byte

// SchemaID is the $id of Schema.
const SchemaID = "https://kubepact.dev/schema/pacto/v2.0"
