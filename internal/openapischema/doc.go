// Package openapischema reads OpenAPI documents and converts their schemas
// to JSON Schema 2020-12. It is shared by the generated tools
// (internal/openapitools, which builds input schemas and locks from it) and
// by payload checks (internal/payload, which validates values against the
// same shapes without calling anything).
//
// It owns two concepts:
//   - a Document: one interface's spec loaded from a bundle's files
//     (OpenAPI 3.0, 3.1, or Swagger 2.0 converted to 3.0), as a decoded tree
//     with its paths in document order, $ref resolution across files
//     (bounded in files and hops), $anchor and nested $defs included, and
//     kin-openapi's typed model loaded lazily for request validation;
//   - a Converter: OpenAPI schemas as self-contained JSON Schema, every
//     reference moved into one $defs map (a cycle stays a reference), the
//     OpenAPI 3.0 dialect (nullable, boolean exclusive bounds, example)
//     rewritten, OpenAPI-only keywords and readOnly properties (never sent)
//     dropped, bounded in nesting and in definitions.
//
// A failure is a Go error in words fit for a tool's withheld reason; a
// document that makes a parser panic is an error too (RecoverInto), never a
// crash.
//
// It knows nothing of tools, names, exposure, credentials or HTTP calls:
// it must not import internal/openapitools, MCP or Kubernetes.
package openapischema
