package mcp

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// CodeToolWithheld is the code of a call to a tool this server knows but
// does not offer: a generated tool the exposure policy withheld, or a tool
// that writes on a read-only server. Reason and Remedy say why and what
// would expose it. tools/list does not show such a tool.
const CodeToolWithheld = "TOOL_WITHHELD"

// Reason of a tool withheld because the server is read-only; the
// capability family's reasons are openapitools.Withheld* codes.
const withheldReadOnly = "READ_ONLY"

// Reason of an operation called by its own name on a server in discovery
// mode, where the call tools reach it.
const withheldDiscovery = "DISCOVERY"

// answerWithheld returns receiving middleware that answers a tools/call
// naming a withheld tool with a TOOL_WITHHELD tool error, instead of the
// protocol error the SDK gives an unknown name: the agent learns that the
// operation exists, why it cannot call it here, and what the operator
// would change. Every other request passes through.
func (s *Server) answerWithheld() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			call, ok := req.(*sdk.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			if _, known := s.tools[call.Params.Name]; known {
				return next(ctx, method, req)
			}
			if te := s.withheldError(call.Params.Name); te != nil {
				return errorResult(te), nil
			}
			return next(ctx, method, req)
		}
	}
}

// withheldError is the TOOL_WITHHELD error for name, or nil when no tool
// of that name was withheld.
func (s *Server) withheldError(name string) *ToolError {
	if slices.Contains(s.withheld, name) {
		return &ToolError{
			Code:    CodeToolWithheld,
			Field:   "name",
			Reason:  withheldReadOnly,
			Message: fmt.Sprintf("%s is not offered: it can write and this server is read-only. Nothing was done.", name),
			Remedy:  "start the server without the read-only option (--read-only)",
		}
	}
	for _, f := range s.families {
		if f.parts == nil || f.parts.withheld == nil {
			continue
		}
		if te := f.parts.withheld(name); te != nil {
			return te
		}
	}
	return nil
}

// withheldError is the TOOL_WITHHELD error for an operation of the bundle
// the exposure policy withheld, or nil when name is not one.
func (st *capabilityState) withheldError(name string) *ToolError {
	for _, w := range st.cb.Capability.Withheld {
		if w.Name != name {
			continue
		}
		return &ToolError{
			Code:   CodeToolWithheld,
			Field:  "name",
			Reason: w.Code,
			Message: fmt.Sprintf("%s (%s %s of interface %q) is not offered by this server (%s): %s. Nothing was sent to the service; pacto_withheld lists every withheld operation.",
				name, w.Method, w.Path, w.Interface, w.Code, FlagWords(w.Reason, openapitools.FlagNames)),
			Remedy: remedyFor(w.Code, name),
		}
	}
	return nil
}

// familyWithheld is the family's answer to a call of a tool it does not
// offer: a withheld operation, or, in discovery mode, an operation reached
// through the call tools rather than a tool of its own.
func (st *capabilityState) familyWithheld(name string) *ToolError {
	if te := st.withheldError(name); te != nil || st.discovery == nil {
		return te
	}
	t := st.discovery.tools[name]
	if t == nil {
		return nil
	}
	return &ToolError{
		Code:   CodeToolWithheld,
		Field:  "name",
		Reason: withheldDiscovery,
		Message: fmt.Sprintf("%s is not a tool of its own here: this server offers the bundle's operations through discovery. Call it with %s as {\"operation\": %q, \"arguments\": {...}}; nothing was sent.",
			name, st.discovery.callerOf(t), name),
		Remedy: fmt.Sprintf("pin it as a tool of its own (--tool-pin %s), or start the server with --tool-mode all", name),
	}
}

// remedyFor says what the operator would change to expose a tool withheld
// for code.
func remedyFor(code, name string) string {
	switch code {
	case openapitools.WithheldWritesNotAllowed:
		return "start the server with writes allowed (--allow-writes)"
	case openapitools.WithheldDenied:
		return fmt.Sprintf("remove %s from the denied operations (--deny-operations)", name)
	case openapitools.WithheldNotAllowed:
		return fmt.Sprintf("add %s to the allowed operations (--allow-operations)", name)
	case openapitools.WithheldFiltered:
		return "start the server with tag and path filters that include it (--include-tags, --exclude-tags, --include-paths, --exclude-paths; reason says which one withholds it)"
	case openapitools.WithheldCredentialInQuery:
		return "start the server with --allow-credentials-in-query if the credential may appear in URLs and the logs that record them, or give a credential for another security scheme the operation accepts"
	case openapitools.WithheldDrift:
		return "none without review: compare the bundle with the tools lock (reason says what differs); if the change is intended, write a new lock (kubepact lock BUNDLE; -o FILE for --tools-lock) and restart the server"
	case openapitools.WithheldReservedName:
		return "none on this server: names starting with " + openapitools.ReservedPrefix + " are kubepact's own; the operation needs another operationId in the bundle"
	default:
		return "none on this server: the operation's definition in the bundle must be fixed (see reason)"
	}
}
