// Package authoring implements the logic behind the four authoring tools
// (pacto_create, pacto_edit, pacto_check and pacto_schema) independently of
// any protocol framework.
//
// It owns:
//   - the checks on typed arguments that no input schema can express
//     (names usable as file names, duplicates, bounds on size), with
//     did-you-mean errors; decoding the arguments, JSON-encoded strings
//     included, is the caller's (package mcp), once for every tool;
//   - intent-level mapping (description inference, state flags) and
//     scaffolding of stub interface specs and configuration schemas;
//   - comment-, order- and scalar-preserving edits of pacto.yaml on
//     yaml.Node trees;
//   - writes confined to a workspace root through [os.Root], made atomic
//     (temporary file in the same directory, fsync, rename);
//   - validation of the result exactly as it will be on disk, through an
//     overlay of the real directory and the files about to be written.
//
// Request and result types carry the MCP wire names as JSON tags so the mcp
// package can use them directly as tool input and output types.
//
// This package must not import the MCP SDK or anything under mcp/; it uses
// bundle/contract for the schema and bundle/validate for validation.
package authoring
