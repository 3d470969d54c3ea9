// Package contract owns the Pacto v2.0 service contract as Go data: the model
// of pacto.yaml (every section and field, tagged with Pacto's names), a strict
// and hostile-input-safe YAML parser for it, and the embedded JSON Schema that
// describes the format.
//
// Parsing is bounded: input size, nesting depth and the number of nodes
// produced by YAML aliases are capped, so an alias bomb or a deeply nested
// document fails fast with a *ParseError instead of exhausting memory. YAML
// dates are kept as the literal text the author wrote ("2099-12-31" stays
// "2099-12-31"), never re-rendered as timestamps.
//
// Parse checks shape only: known fields, one document, mapping root, value
// kinds. Whether a contract is valid (required fields, enums, semver, files
// that exist, policies) is the job of package bundle/validate.
//
// This package must not import the rest of kubepact (bundle loading, OCI, MCP,
// fleetgraph, Kubernetes); it depends only on the YAML decoder.
package contract
