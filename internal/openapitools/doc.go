// Package openapitools turns the OpenAPI operations of a Pacto bundle into
// tools — one per operation — and calls the live service when a tool is
// invoked. Reading the OpenAPI document and converting its schemas to JSON
// Schema is package internal/openapischema's; this package decides what a
// tool is.
//
// # Projection
//
// Project reads every `openapi` interface of a bundle (OpenAPI 3.0, 3.1, or
// Swagger 2.0) and returns a Capability: the exposed [Tool]s, every withheld
// operation with its reason (a [Withheld] code), and the warning lines a
// command prints on stderr. A tool's input schema holds its parameters by
// argument name and the request body as `body`; an operation whose schema no
// validator can evaluate (an unguarded $ref cycle, found by
// internal/schemacycle) is withheld, never served.
//
// # Names
//
// A name is the operationId, else `<method>_<path>` with every run of other
// characters than letters and digits collapsed to `_` (GET /health →
// get_health); with several openapi interfaces every name is prefixed
// `<interface>_`. A name an operationId gives is the tool's identity and is
// never renamed: two operations claiming one name stop the projection with an
// error naming both. Derived names that collide get `_2`, `_3`… in document
// order. Every operation is named before any exposure filter, so a name never
// depends on the policy. Names longer than the MCP limit (MaxNameLength) are
// cut and end in `_` plus 8 hex digits of a hash of the full name;
// characters MCP does not allow in names become `_`.
//
// # Exposure
//
// Only GET and HEAD are exposed unless writes are allowed; allow and deny
// lists by tool name; names starting with ReservedPrefix (`pacto_`) are
// kubepact's own, so such an operation is skipped, never renamed. Options
// holds the policy and binds the flags the `mcp` and `sidecar` commands
// share; errors, withheld reasons and warnings name option fields
// (AllowWrites, DenyOperations), and FlagNames maps them to flags for
// whoever shows them to a person.
//
// # The tools lock
//
// A Lock pins one entry per tool (name, operation, annotations, digests of
// its text, input schema, response schemas and request shape) and a surface
// digest. Project holds the exposed tools to a lock — Options.Lock, else the
// bundle's own tools.lock.json — withholding any that differ or are not
// locked (DRIFT). The format is documented on Lock.
//
// # Calls
//
// Tool.CallChecked takes arguments already decoded and checked against the
// tool's schemas (Tool.ArgumentSchemas) by package mcp's argument decoder;
// it serializes them as OpenAPI says (style, explode, allowReserved, media
// types), refuses what only the request shows (a header with a line break, a
// path value that would make a dot segment, kin-openapi's request validator's
// verdict, in our own words) and then sends nothing; adds credentials per
// security scheme; follows no redirect; bounds the call in time and the whole
// encoded result in bytes (a body cut short is an error). A call that needs a person's confirmation
// (Options.ConfirmWrites) waits for the Confirmer the caller put in the
// context (WithConfirmer) and is refused, never sent, without one; the
// confirmer sees the request as it will be sent, before credentials are
// added. A
// Shape (Shapes) is the contract-only view of an operation that payload
// checks read.
//
// # Trust
//
// Bundle content (operationIds, servers, schemas) is untrusted input:
// projection must not panic on any document, names are sanitized, the
// reserved prefix is enforced on the final name, and credentials are only
// ever sent to an explicitly configured base URL.
//
// # Imports
//
// It must not import MCP or Kubernetes packages, nor anything that serves
// or watches: package mcp wraps it, and the sidecar links it without a
// Kubernetes client. The network predicates it shares with the transports
// are internal/netx's.
package openapitools
