package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/validate"
)

// Error codes that this package produces itself; see the package's
// error table above for every code a tool answers with.
const (
	CodeInvalidArgument = "INVALID_ARGUMENT" // an argument is unknown, missing, mistyped or out of range
	CodeCancelled       = "CANCELLED"        // the caller went away or the call timed out
	CodeInternal        = "INTERNAL"         // a failure on our side; details are in the server log only
)

// ToolError is the one error of every tool, and this is the one list of
// its codes.
//
// Every refused or failed tool call is an isError result whose
// structuredContent is {"error": ToolError} — and, for a generated tool's
// refused arguments, also "diagnostics": one {field, code, expected,
// message, didYouMean?} per fault. The text content is the same error in
// one line ("CODE: message", then a did-you-mean, the accepted argument
// names where the fault is about names, and a remedy where one exists).
// A tool name the server does not know at all is a protocol error, as MCP
// says; every other fault is a tool error.
//
// Arguments are decoded and checked in one place, this package's argument
// decoder (args.go), for every family; its messages are written from the
// schema (explain.go): what was given, what is accepted, an example for
// structured values — never a Go rendering of a value nor a validator's
// text. The domain packages receive decoded, checked values.
//
// error.code is one of:
//
//	code                    from          meaning
//	INVALID_ARGUMENT        every tool    an argument is not an object, unknown, given twice, missing,
//	                                      of the wrong type or out of range; field names it (a path
//	                                      into a structured argument, add_interfaces[1].type)
//	TOOL_WITHHELD           server        the tool exists but is not offered here; reason says why
//	                                      (READ_ONLY, WRITES_NOT_ALLOWED, DENIED, NOT_ALLOWED,
//	                                      RESERVED_NAME, UNSUPPORTED), remedy what would expose it
//	CANCELLED               server        the caller went away or the call timed out
//	INTERNAL                server        a failure on our side; details are in the server log
//	PATH_OUTSIDE_WORKSPACE  authoring,    a path leads outside the workspace (also through a symlink)
//	                        fleet
//	ALREADY_EXISTS          authoring     the target exists and the call may not replace it
//	NOT_FOUND               authoring,    the contract, item, skill or ref named does not exist;
//	                        fleet, skill  didYouMean may name the nearest
//	INVALID_CONTRACT        authoring,    the result would not be, or a ref is not, a valid contract;
//	                        fleet         findings carries the validation findings
//	SNAPSHOT_EXPIRED        fleet         a pinned snapshot is no longer kept
//	SNAPSHOT_MISMATCH       fleet         a cursor belongs to another snapshot
//	CURSOR_INVALID          fleet         a cursor is not one this server gave
//	REGISTRY_DISABLED       fleet         a ref needs a registry and none is configured
//	UNAVAILABLE             fleet         a ref could not be fetched, or what the caller may see
//	                                      could not be decided now (a Scoper's authority is down)
//
// diagnostics[].code (generated tools) is one of NOT_AN_OBJECT,
// UNKNOWN_ARGUMENT, DUPLICATE_ARGUMENT, REQUIRED, INVALID_VALUE and
// REQUEST_INVALID (the OpenAPI request validator refused the request as
// it would be sent); see bundle/capability.
//
// Validation findings (pacto_check, INVALID_CONTRACT's findings) carry
// Pacto's codes, plus kubepact's CONFIG_REF_NOT_RESOLVED and
// REF_UNREACHABLE (a ref's registry did not answer: "could not check",
// not "invalid"); see bundle/validate.
type ToolError struct {
	// Code is stable and machine-readable, one of the table above.
	Code string `json:"code" jsonschema:"stable machine-readable error code"`
	// Message is one human-readable sentence.
	Message string `json:"message" jsonschema:"human-readable explanation"`
	// Field names the argument (or contract field) at fault, if any.
	Field string `json:"field,omitempty" jsonschema:"the argument or field at fault"`
	// Accepted lists what would have been accepted: the tool's argument
	// names for an unknown argument, the existing names for a NOT_FOUND.
	Accepted []string `json:"accepted,omitempty" jsonschema:"what would have been accepted (argument names, or existing names)"`
	// DidYouMean is the accepted name nearest to an unknown one.
	DidYouMean string `json:"didYouMean,omitempty" jsonschema:"the accepted name nearest to the unknown one"`
	// Reason is the machine-readable cause of a TOOL_WITHHELD error
	// (READ_ONLY or a capability.Withheld* code).
	Reason string `json:"reason,omitempty" jsonschema:"why a TOOL_WITHHELD tool is not offered"`
	// Remedy says what would change the outcome, e.g. the server option
	// that would expose a withheld tool.
	Remedy string `json:"remedy,omitempty" jsonschema:"what would change the outcome"`
	// Findings are the validation findings behind an INVALID_CONTRACT error.
	Findings []validate.Finding `json:"findings,omitempty" jsonschema:"validation findings behind an INVALID_CONTRACT error"`

	// argNames is true when Accepted lists the tool's argument names (the
	// text then says so); other lists (values, fields, paths) are named in
	// Message by whoever wrote it.
	argNames bool
}

func (e *ToolError) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.DidYouMean != "" && !strings.Contains(e.Message, strconv.Quote(e.DidYouMean)) {
		fmt.Fprintf(&b, " (did you mean %q?)", e.DidYouMean)
	}
	if len(e.Accepted) > 0 && e.argNames {
		fmt.Fprintf(&b, ". Accepted arguments: %s.", strings.Join(e.Accepted, ", "))
	}
	if e.Remedy != "" {
		fmt.Fprintf(&b, " To expose it: %s.", e.Remedy)
	}
	return b.String()
}

// errorEnvelope is the structuredContent of an error result.
type errorEnvelope struct {
	Error *ToolError `json:"error"`
}

// errorResult wraps err in the error envelope.
func errorResult(err error) *sdk.CallToolResult {
	te := asToolError(err)
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: te.Error()}},
		StructuredContent: errorEnvelope{Error: te},
	}
}

func asToolError(err error) *ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	if te := familyError(err); te != nil {
		return te
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &ToolError{Code: CodeCancelled, Message: err.Error()}
	}
	return &ToolError{Code: CodeInternal, Message: err.Error()}
}
