// Package mcp is kubepact's MCP server: it assembles tool families on a
// go-sdk server, decodes every tool's arguments strictly, wraps results and
// errors in one envelope, writes the instructions text, and serves the
// result over stdio or hardened Streamable HTTP.
//
// # Map
//
//   - The server and its options. [NewServer] builds a [Server] from
//     [Options] (nil means the defaults): the families the options select,
//     their tools registered explicitly on one go-sdk server, the
//     instructions text and pacto_server_info written from what was
//     registered. [HTTPOptions], embedded in Options, are the Streamable
//     HTTP transport's settings; each option group binds its own flags
//     (BindFlags, BindHTTPFlags), and an [OptionError] names the option
//     it refuses, which a command renders as its flag ([OptionError.Named]).
//   - Tool families. A family is a value, not a method on Server: a name, a
//     summary and a build function returning its tools and, optionally,
//     resources, prompts, an instructions paragraph and answers for the
//     tools it withholds. Adding one means writing such a value and
//     listing it; nothing on Server changes. The families are authoring
//     (the pacto_* authoring tools), capability (a bundle's OpenAPI
//     operations as generated tools, calling the live service, with
//     pacto_skill and pacto_withheld), fleet (pacto_fleet_* and
//     pacto_impact over fleetgraph snapshots, pinned per session), payload
//     (pacto_validate_payload and pacto_explain_field, from any contract
//     source) and catalog (Pacto's catalog mode over roots kept live).
//   - Tools and the envelope. Every tool answers with structuredContent
//     and a short text, or an isError result carrying
//     {error:{code,message,...}} with the codes of one table; its schemas
//     are shown in the shape MCP clients enforce on tools/list, and its
//     arguments are decoded strictly (unknown names, wrong types and
//     missing required arguments are errors that list what is accepted and
//     suggest the nearest name).
//   - Confirmations. A generated tool that writes asks the person at the
//     client to confirm the exact request: through elicitation, or on the
//     2026-07-28 era by a requestState the server issued (HMAC'd, bound to
//     the request and the caller, single-use, expiring), never one a
//     client can make.
//   - Transports. stdio is the SDK's own behind a filter that applies the
//     strict JSON-RPC envelope to every line (no key twice at any depth, no
//     case variant of a protocol member, ids echoed exactly). Streamable
//     HTTP at /mcp serves both protocol eras (sessions for 2025-11-25,
//     stateless for 2026-07-28) behind Host and Origin checks and bearer
//     authentication; [Server.Serve] is the one HTTP server of every shape
//     and drains calls in progress before closing sessions.
//   - Identity and scope. An [Authenticator] turns a bearer token into an
//     [Identity] (the static token of AuthTokenFile, or the operator's
//     Kubernetes one), which binds a session to its creator and is named in
//     every audit line; a [Scoper] decides which namespaces of the fleet a
//     caller sees, and fleet answers are computed inside that restricted
//     view, never filtered afterwards.
//   - Limits. Connections, sessions (overall and per caller, the one idle
//     longest evicted first), the request bytes held at once (a request
//     that does not fit is refused unread) and the expensive calls
//     ([BudgetOptions]: so many at once overall and per caller, each within
//     a deadline and a share of bundle memory) are each bounded, and every
//     bound's refusal says which it was.
//   - Observation. Every tool call has an audit line and Prometheus
//     metrics.
//
// A program adds families of its own through [Options.Extensions]: each
// [Extension] is built, listed and switched on like kubepact's families.
// hack/conformance/server serves the MCP conformance suite's fixtures this
// way; the release binary has none of them.
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
// This package may import bundle/..., internal/..., fleetgraph and
// fleetgraph/source. It must never import Kubernetes packages: the
// operator gives it Kubernetes identity through [Authenticator] and
// [Scoper], and serves it with [Server.Serve] on a listener of its own.
// The SDK is imported as sdk "github.com/modelcontextprotocol/go-sdk/mcp".
package mcp
