// Package invoke makes the live HTTP call of a generated tool: Call sends
// one call of an openapitools.Tool, built from the tool's Operation (the
// read-only description projection made).
//
// # The call
//
// Call takes arguments already decoded and checked against the tool's
// schemas (openapitools.Tool.ArgumentSchemas) by package mcp's argument
// decoder. It serializes them as OpenAPI says (style, explode,
// allowReserved, media types); refuses what only the request shows (a
// header with a line break, a path value that would make a dot segment, a
// request that would leave the base URL's origin, kin-openapi's request
// validator's verdict, in our own words) with an ArgumentError, and then
// sends nothing; adds the credentials the operation chose, as each
// security scheme places them; follows no redirect; bounds the call in
// time and the whole encoded Result in bytes (a body cut short is an
// error). A transport failure is told in a sentence with what to do, never
// in the transport's own text (Result.Failure; Result.Cause keeps that for
// the log).
//
// # Confirmation
//
// A call that needs a person's confirmation (openapitools.Tool.
// NeedsConfirmation) waits for the Confirmer the caller put in the context
// (WithConfirmer) and is refused with a NotConfirmedError, never sent,
// without one. The Confirmer sees the PendingCall exactly as it will be
// sent, before credentials are added; its error is the call's.
//
// # Diagnostics
//
// Diagnostic is the one shape of an argument fault on the wire, whoever
// finds it: package mcp's decoder (NOT_AN_OBJECT, UNKNOWN_ARGUMENT,
// REQUIRED, INVALID_VALUE, DUPLICATE_ARGUMENT) or Call (INVALID_VALUE,
// REQUEST_INVALID).
//
// # Imports
//
// It imports openapitools and never the reverse; like it, it must not
// import MCP or Kubernetes packages (.golangci.yml's depguard rules).
package invoke
