// Package openapitools turns the OpenAPI operations of a Pacto bundle into
// tools — one per operation — and describes each tool's operation as it
// goes on the wire. Reading the OpenAPI document and converting its schemas
// to JSON Schema is package internal/openapischema's; calling the live
// service is package internal/openapitools/invoke's; this package decides
// what a tool is.
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
// depends on the policy. Names longer than the cap (Options.MaxNameLength,
// default DefaultNameCap: 64, what OpenAI, Bedrock and Claude accept) are
// abbreviated word by word (repository → repo, then inner vowels dropped,
// longest word first) and end in `_` plus 6 hex digits of the SHA-256 of
// the full name: the result depends on the name alone, never on the other
// operations, so it is the same on every run and under every filter. A
// tools lock keeps the names it records for the same operations (same
// operationId), whatever the cap. Characters MCP does not allow in names
// become `_`.
//
// # Discovery
//
// Options.ToolMode chooses how package mcp offers the operations: one tool
// each, or search, describe and call tools (ToolModeDiscover; ToolModeAuto
// above AutoDiscoverTools or AutoDiscoverTokens). Capability.Search ranks
// every operation, exposed or withheld, with BM25F over name, summary,
// description, tags, path and parameter names and a short fixed synonym
// list — no model, so the same query gives the same answer on every
// server; the index is built on the first search and kept with the
// Capability.
//
// # Exposure
//
// Only GET and HEAD are exposed unless writes are allowed; allow and deny
// lists by tool name; tag and path-prefix filters (IncludeTags,
// ExcludeTags, IncludePaths, ExcludePaths: withheld as FILTERED, a tag or
// prefix no operation has refused); a description overrides file by
// operationId (DescriptionsFile, bounded; an unknown operationId refused),
// whose text the lock pins like any other; names starting with ReservedPrefix (`pacto_`) are
// kubepact's own, so such an operation is skipped, never renamed. Options
// holds the policy and binds the flags the `mcp` and `sidecar` commands
// share; errors, withheld reasons and warnings name option fields
// (AllowWrites, DenyOperations), and FlagNames maps them to flags for
// whoever shows them to a person.
//
// # Index
//
// Capability.Index lists every operation, exposed or withheld, with its
// name, method, path, tags, argument names, annotations and withheld
// reason, from fields projection already holds: what a discovery mode
// searches without registering a tool per operation. Capability.Tool gives
// the tool of an exposed entry (its input schema, its Operation to call).
//
// # The tools lock
//
// A Lock pins one entry per tool (name, operation, annotations, digests of
// its text, input schema, response schemas and request shape) and their
// lockDigest. Project holds the exposed tools to a lock — Options.Lock, else the
// bundle's own tools.lock.json — withholding any that differ or are not
// locked (DRIFT). The format is documented on Lock.
//
// # Operations
//
// Tool.Operation is the read-only description a call is built from: each
// parameter with its location, style, explode and allowReserved, the body's
// media type, the Accept header, the base URL's origin, the credentials the
// security requirements choose (never into a URL query without
// Options.AllowCredentialsInQuery), the HTTP client (it follows no
// redirect), the call's limits, and the kin-openapi route its requests are
// checked against (one operation's wire form, built on its first call from
// its own parameters and input schema, never from the whole document; see
// route.go).
// Tool.ArgumentSchemas and TooDeep are what the caller that decodes
// arguments (package mcp) checks them with; Tool.NeedsConfirmation is the
// confirmation policy (Options.ConfirmWrites) applied to the tool. A Shape
// (Shapes) is the contract-only view of an operation that payload checks
// read.
//
// # Memory
//
// A document is decoded once (a .json file from the bundle's reader, with no
// copy beside the tree) and released when its interface's operations are
// built. Before that, each operation drops what only projection reads and
// copies what it keeps into fresh memory (compact.go), so that the heap
// spans the decoded tree filled hold only garbage and can be returned to
// the OS.
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
// Kubernetes client. It never imports its call, package invoke, which
// imports it. The network predicates it shares with the transports
// are internal/netx's.
package openapitools
