// Package openapitools projects the OpenAPI interfaces of a Pacto bundle into
// tool specifications — one per operation — and calls the live service
// when a tool is invoked.
//
// # Map
//
//   - project.go: [Project] reads every `openapi` interface of a bundle
//     (OpenAPI 3.0, 3.1, or Swagger 2.0 converted with kin-openapi) and
//     returns a [Capability]: the exposed [Tool]s, every withheld operation
//     with its reason, and the warning lines a command prints on stderr.
//   - naming.go: tool names. A name is the operationId, else
//     `<method>_<path>` with every run of other characters than letters and
//     digits collapsed to `_` (GET /health → get_health). When a bundle has
//     several openapi interfaces every name is prefixed `<interface>_`.
//     A name an operationId gives is the tool's identity and never renamed:
//     two operations claiming one name stop the projection with an error
//     naming both (no last-write-wins, no silent `_2`). Derived names that
//     collide, with each other or with a claimed name, get `_2`, `_3`… in
//     document order. Every operation is named before any exposure filter,
//     so a name never depends on AllowWrites or the allow and deny lists.
//     Names longer than the MCP limit (128) are cut and end in `_` plus 8
//     hex digits of a hash of the full name. Characters MCP does not allow
//     in names become `_`.
//   - schema.go: input schemas in JSON Schema 2020-12 (what the MCP SDK and
//     github.com/google/jsonschema-go validate with): parameters by name,
//     the request body as `body`, every $ref moved into $defs (cycles stay
//     references), OpenAPI 3.0 dialect converted. An operation whose schema
//     no validator can evaluate — a $ref cycle that never descends into a
//     property or item, found by internal/schemacycle — is withheld.
//   - policy.go: exposure. Only GET and HEAD are exposed unless writes are
//     allowed; allow and deny lists by tool name; names starting with
//     `pacto_` are reserved for kubepact's own tools, so such an operation is
//     skipped, never renamed.
//   - invoke.go, serialize.go, auth.go: the HTTP call. [Tool.CallChecked]
//     takes arguments already decoded and checked against the tool's
//     schemas ([Tool.ArgumentSchemas]) by the one argument decoder, package
//     mcp's; it serializes them as OpenAPI says, refuses what only the
//     request shows (a header with a line break, a path value that would
//     make a dot segment, kin-openapi's request validator's verdict, in our
//     own words) and sends nothing then; credentials per security scheme;
//     no redirect ever followed; a timeout and a byte cap on the whole
//     encoded result; a body cut short is an error.
//   - lock.go: tools locks ([Lock]): one entry per tool (name, operation,
//     annotations, digests of its text, input schema and response schemas)
//     and a surface digest; [Project] holds the exposed tools to a lock —
//     Options.Lock, else the bundle's own tools.lock.json — withholding any
//     that differ or are not locked (reason DRIFT) and reporting locked
//     tools the bundle no longer has. The format is documented there.
//   - confirm.go: which calls wait for a person's confirmation
//     (Options.ConfirmWrites: delete, always, never) and the [Confirmer] a
//     caller puts in the call's context; such a call without one is
//     refused, never sent unconfirmed. The confirmer sees the request as it
//     will be sent, before credentials are added.
//   - options.go: [Options] and the flags the `mcp` and `sidecar` commands
//     share. Errors, withheld reasons and warnings name option fields
//     (AllowWrites, DenyOperations); [FlagNames] maps them to the flags for
//     whoever shows them to a person or an agent (the CLI, the MCP layer).
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
// This package must not import MCP or Kubernetes packages: the MCP layer
// (package mcp) wraps it, and the sidecar links it without a Kubernetes
// client.
package openapitools
