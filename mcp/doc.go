// Package mcp is kubepact's MCP server: it assembles tool families on a
// go-sdk server, decodes every tool's arguments strictly, wraps results and
// errors in one envelope, writes the instructions text, and serves the
// result over stdio or hardened Streamable HTTP.
//
// # Map
//
//   - options.go: [Options], the flag group `kubepact mcp` binds, and defaults.
//   - server.go: [NewContext] and [Server]; the families Options selects
//     are built and their tools registered explicitly on one SDK server
//     instance.
//   - family.go: a tool family is a value (name, summary, build function
//     returning its tools and optional resources, prompts, instructions
//     paragraph and withheld-tool answers), not a method on Server. To add
//     a family, write one such value in its own file and list it in the
//     families variable; the server builds and registers it with no other
//     change.
//   - tool.go: what a tool is; the envelope every tool answers with
//     (structuredContent plus a short text, or an isError result carrying
//     {error:{code,message,...}}).
//   - mcpshape.go: tool schemas as tools/list shows them, in the shape the
//     MCP schema types (root type object, every subschema an object), which
//     clients such as the TypeScript SDK enforce on the whole list.
//   - args.go: strict argument decoding: unknown names, wrong types and
//     missing required arguments are errors that list the accepted names and
//     suggest the nearest one.
//   - authoring.go: the four pacto_* authoring tools over internal/authoring.
//   - capability.go: a bundle's OpenAPI operations as generated tools over
//     internal/openapitools, pacto_skill, pacto_withheld, skills as resources
//     and prompts.
//   - confirm.go: confirmations of the generated tools' writes: asked
//     through elicitation, or on the 2026-07-28 era carried by a
//     requestState the server issued (HMAC'd, bound to the request and the
//     caller, single-use, expiring), never by one a client can make.
//   - fleet.go: the pacto_fleet_* tools and pacto_impact over fleetgraph
//     snapshots, with per-session snapshot pinning.
//   - payload.go: pacto_validate_payload and pacto_explain_field over
//     internal/payload, a family of its own (served by default) because it
//     needs a contract, not a particular source: a bundle directory in the
//     workspace, an oci:// reference, the bundle the capability family
//     serves, or a fleet service by name or name@version (read again from
//     where its source found it). It sits outside the fleet family so that
//     family's tools/list stays within its token budget.
//   - catalog.go: Pacto's catalog mode over internal/catalog: the resources
//     pacto://catalog and pacto://catalog/closure and pacto_catalog_revision,
//     over roots kept live (re-resolved every Catalog.Refresh), served
//     from the start: a RESOLVING placeholder answers until the first
//     resolution, in the background, has ended.
//   - conformance_fixtures.go: the MCP conformance suite's fixtures as one
//     more family, compiled only with the build tag conformance (the release
//     binary has none of it).
//   - info.go: the instructions text and the read-only pacto_server_info tool.
//   - observe.go: the audit line and Prometheus metrics per tool call.
//   - http.go: Streamable HTTP at /mcp serving both protocol eras (sessions
//     for 2025-11-25 clients, stateless for 2026-07-28 ones), Host/Origin
//     checks, bearer authentication, limits and graceful shutdown.
//     Serve is the one HTTP server of every shape (mcp -t http, sidecar):
//     it drains calls in progress before closing sessions. A request with
//     Transfer-Encoding is refused and its connection closed (Go's server
//     hides a Content-Length beside it).
//   - stdio.go: the stdio transport, the SDK's own behind a filter that
//     applies the strict envelope to every line and answers, without
//     ending the session, the lines the SDK would end it on.
//   - identity.go: who calls. [Authenticator] turns a bearer token into an
//     [Identity] (AuthTokenFile is the static one; the operator's checks
//     Kubernetes tokens); the identity binds a session to its creator,
//     reaches every tool call and is named in its audit line. [Scoper]
//     decides which namespaces of a fleet snapshot a caller may see, and
//     fleet answers are computed inside that restricted view
//     (fleetgraph.Snapshot.Restrict), never filtered afterwards.
//   - envelope.go: the strict JSON-RPC envelope (no key twice at any
//     depth, no two keys differing only in case, no case variant of a
//     JSON-RPC or MCP member, ids the SDK echoes exactly), one function
//     both transports apply before the SDK decodes.
//   - connlimit.go, sessions.go: the connection and session limits, with
//     O(1) eviction of the connection or session idle longest (a GET
//     stream is not activity) and a per-caller session quota.
//   - requestbytes.go: the request bodies held at once, overall and per
//     caller: a request is refused unread when its Content-Length does
//     not fit, so many large requests cannot hold many times the memory.
//   - budget.go: bounded work per call and per caller. Tools marked
//     expensive (they read, project or diff bundles, or check values
//     against their schemas) and the catalog's document reads run within
//     [BudgetOptions]: so many at once overall and per caller (past that
//     BUSY, never a queue), each within a deadline that stops its work,
//     and holding only so much bundle memory, per call and together
//     (bundle bytes times what reading or projecting makes of them).
//
// # Safety
//
// Every tool carries all four MCP annotations, set by code. A tool that can
// write anything is marked as such and is not registered at all on a
// read-only server. The HTTP transport binds to loopback unless told
// otherwise and refuses to listen beyond loopback without authentication
// unless that is explicitly allowed.
//
// # Imports
//
// This package may import bundle/... and, later, fleetgraph. It must never
// import Kubernetes packages: the operator mounts [Server.Handler] itself.
// The SDK is imported as sdk "github.com/modelcontextprotocol/go-sdk/mcp".
package mcp
