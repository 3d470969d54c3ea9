package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/internal/authoring"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// Error codes that this package produces itself; see the package's
// error table above for every code a tool answers with.
const (
	CodeInvalidArgument = "INVALID_ARGUMENT" // an argument is unknown, missing, mistyped or out of range
	CodeCancelled       = "CANCELLED"        // the caller went away or the call timed out
	CodeBusy            = "BUSY"             // as much expensive work is under way as the server allows; retry after retryAfterMs
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
// schema (argfaults.go): what was given, what is accepted, an example for
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
//	                                      FILTERED, RESERVED_NAME, UNSUPPORTED, CREDENTIAL_IN_QUERY,
//	                                      DRIFT: differs from the tools lock), remedy what would
//	                                      expose it
//	NOT_CONFIRMED           generated     the call needed the user's confirmation and did not get it;
//	                        tools         nothing was sent. reason: DECLINED, CANCELLED (the user's
//	                                      answer), NO_ELICITATION (the client cannot ask),
//	                                      ELICITATION_FAILED; on the 2026-07-28 retry, the confirmation
//	                                      state it carries is FORGED (not issued by this server
//	                                      process), EXPIRED, REPLAYED (used before), REQUEST_MISMATCH
//	                                      (issued for another tool or arguments), CALLER_MISMATCH
//	                                      (issued to another identity or connection) or OVERLOADED
//	                                      (too many used recently to track one more); remedy says
//	                                      what the agent or the operator can do
//	CANCELLED               server        the caller went away or the call timed out (--expensive-call-timeout);
//	                                      its work was stopped
//	BUSY                    server        the expensive calls in progress (everyone's, or this caller's) or
//	                                      the bundle memory they hold are at the server's limits;
//	                                      retryAfterMs says when to try again, nothing was done
//	INTERNAL                server        a failure on our side; details are in the server log
//	INSUFFICIENT_SCOPE      server        a tool that can write was called with an OAuth token without the
//	                                      write scope (ProtectedResource.WriteScope); nothing was done,
//	                                      remedy names the scope
//	PATH_OUTSIDE_WORKSPACE  authoring,    a path leads outside the workspace (also through a symlink)
//	                        fleet, payload
//	ALREADY_EXISTS          authoring     the target exists and the call may not replace it
//	NOT_FOUND               authoring,    the contract, item, skill or ref named does not exist (payload:
//	                        fleet, skill, the service, operation, status, message or configuration);
//	                        payload       didYouMean may name the nearest
//	INVALID_CONTRACT        authoring,    the result would not be, or a ref is not, a valid contract;
//	                        fleet,        findings carries the validation findings
//	                        payload
//	SCHEMA_UNAVAILABLE      payload       the subject exists but its schema cannot be evaluated here
//	                                      (another schema language, another bundle, a self-referring
//	                                      cycle, unreadable); the message says which
//	SNAPSHOT_EXPIRED        fleet         a pinned snapshot is no longer kept
//	SNAPSHOT_MISMATCH       fleet         a cursor belongs to another snapshot
//	CURSOR_INVALID          fleet         a cursor is not one this server gave
//	REGISTRY_DISABLED       fleet,        a ref needs a registry and none is configured
//	                        payload
//	REGISTRY_NOT_ALLOWED    fleet,        the registry policy refused a ref's registry (not in --allowed-registries,
//	                        payload       or at an address only a registry named there may be at); nothing was sent
//	UNAVAILABLE             fleet,        a ref could not be fetched (payload: or a fleet revision's
//	                        payload       bundle could not be read again), or what the caller may
//	                                      see could not be decided now (a Scoper's authority is down)
//	AUTH_FAILED,            fleet,        a ref failed to load, coded by bundle/failure (its one table,
//	INVALID_REFERENCE,      payload       failure.Kind.Code: the same words as the catalog's reasons, the
//	BUNDLE_UNREADABLE,                    fleet's source errors and `kubepact check -o json`): the registry
//	LIMIT_EXCEEDED,                       refused the credentials; the ref is malformed; what it names is
//	UNSAFE_BUNDLE                         not a Pacto bundle; it is over the limits; it holds a link, a
//	                                      device or a path leaving it (NOT_FOUND, REGISTRY_NOT_ALLOWED,
//	                                      UNAVAILABLE and CANCELLED above are that table's too)
//
// An argument diagnostic has one shape, invoke.Diagnostic {field,
// code, expected?, message, didYouMean?}, whoever finds the fault: this
// package's decoder (every fault of a generated tool's arguments at once)
// or invoke.Call (what only the request shows). Its code
// is one of NOT_AN_OBJECT, UNKNOWN_ARGUMENT, DUPLICATE_ARGUMENT, REQUIRED,
// INVALID_VALUE and REQUEST_INVALID (the operation's OpenAPI definition
// refuses the request as it would be sent, said in our words: the
// argument or path into the body, and the rule it breaks).
//
// pacto_validate_payload's diagnostics[].code (a misfit is a result, not
// an error) is one of internal/payload's Diag* codes: TYPE_MISMATCH, REQUIRED,
// UNKNOWN_FIELD, NOT_ALLOWED_VALUE, CONST_MISMATCH, PATTERN_MISMATCH,
// FORMAT_MISMATCH, OUT_OF_RANGE, LENGTH, COUNT, NOT_MULTIPLE, NOT_UNIQUE,
// NO_MATCHING_ALTERNATIVE, NOT_ALLOWED_HERE, INVALID_VALUE, and the
// warnings DEPRECATED and WRITE_ONLY_FIELD.
//
// The domain packages keep error types of their own — they are libraries
// used without MCP too, and the validation findings are Pacto's output
// format — and each maps onto ToolError in one function:
//
//	domain error                 mapped by          onto
//	*authoring.Error             authoringError     code, message, field, accepted, didYouMean, findings: field for field
//	*invoke.ArgumentError,   argumentRefusal    INVALID_ARGUMENT naming the tool and each fault, field and
//	  the decoder's diagnostics                     didYouMean of the first; the diagnostics beside it, unchanged
//	*fleetgraph.QueryError,      queryToolError     code, field, message
//	  *source.RefError                              code, message
//	*payload.Error               payloadToolError   code, message, accepted, didYouMean; field as the argument it names
//	validate.Finding             (carried as is)    findings[]: {path, code, message}, Pacto's codes plus kubepact's
//	                                                CONFIG_REF_NOT_RESOLVED and REF_UNREACHABLE (a ref's registry did
//	                                                not answer: "could not check", not "invalid")
//	openapitools.Withheld          withheldError      TOOL_WITHHELD; reason is its code, the message its reason with
//	                                                option fields named as this server's flags (FlagWords)
//	context.Canceled/Deadline    asToolError        CANCELLED
//	anything else                asToolError        INTERNAL
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
	// (READ_ONLY or a openapitools.Withheld* code) or of a NOT_CONFIRMED
	// one (see the table above).
	Reason string `json:"reason,omitempty" jsonschema:"why a TOOL_WITHHELD tool is not offered"`
	// Remedy says what would change the outcome, e.g. the server option
	// that would expose a withheld tool.
	Remedy string `json:"remedy,omitempty" jsonschema:"what would change the outcome"`
	// RetryAfterMs, on a BUSY error, is how long to wait before trying
	// the same call again.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty" jsonschema:"for BUSY: milliseconds to wait before retrying"`
	// Findings are the validation findings behind an INVALID_CONTRACT error.
	Findings []validate.Finding `json:"findings,omitempty" jsonschema:"validation findings behind an INVALID_CONTRACT error"`

	// argNames is true when Accepted lists the tool's argument names (the
	// text then says so); other lists (values, fields, paths) are named in
	// Message by whoever wrote it.
	argNames bool
	// cause is the error behind a message written in words, for the
	// server's log (the audit line); it never reaches the caller.
	cause error
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
		if e.Code == CodeToolWithheld {
			fmt.Fprintf(&b, " To expose it: %s.", e.Remedy)
		} else {
			fmt.Fprintf(&b, " What to do: %s.", e.Remedy)
		}
	}
	if e.RetryAfterMs > 0 {
		fmt.Fprintf(&b, " Retry in %s.", time.Duration(e.RetryAfterMs)*time.Millisecond)
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
	if te := authoringError(err); te != nil {
		return te
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ToolError{Code: CodeCancelled, Message: "the call ran out of time before it finished; its work was stopped", cause: err}
	}
	if errors.Is(err, context.Canceled) {
		return &ToolError{Code: CodeCancelled, Message: "the call was cancelled before it finished (the client cancelled it or went away); its work was stopped", cause: err}
	}
	if te := fileToolError(err); te != nil {
		return te
	}
	// Anything else is ours to explain, in the log: its text is Go's.
	return &ToolError{Code: CodeInternal, Message: "the tool failed on the server's side; the server's log has the details", cause: err}
}

// authoringError maps an *authoring.Error onto the envelope, field for
// field; nil when err is none.
func authoringError(err error) *ToolError {
	var ae *authoring.Error
	if !errors.As(err, &ae) {
		return nil
	}
	// An I/O failure's message ends with Go's own text: say it in words.
	if cause := ae.Unwrap(); ae.Code == authoring.CodeInternal && cause != nil && strings.HasSuffix(ae.Message, ": "+cause.Error()) {
		if te := fileToolError(err); te != nil {
			if te.Code != CodeInternal {
				te.Field = "path" // the workspace path the tool was given
			}
			return te
		}
		return &ToolError{Code: CodeInternal, cause: err,
			Message: strings.TrimSuffix(ae.Message, ": "+cause.Error()) + ": failed on the server's side; the server's log has the details"}
	}
	return &ToolError{Code: ae.Code, Message: ae.Message, Field: ae.Field, Accepted: ae.Accepted, DidYouMean: ae.DidYouMean, Findings: ae.Findings}
}

// argumentFault is a generated tool's answer to refused arguments: the
// error envelope plus one diagnostic per fault.
type argumentFault struct {
	Error       *ToolError          `json:"error"`
	Diagnostics []invoke.Diagnostic `json:"diagnostics"`
}

// argumentRefusal answers a generated tool call whose arguments were
// refused, by this package's decoder or by invoke.Call: INVALID_ARGUMENT
// naming the tool and every fault (field and didYouMean of the first),
// the accepted argument names when a fault is about names, and the
// diagnostics themselves. Nothing was sent to the service.
func argumentRefusal(ct *openapitools.Tool, diags []invoke.Diagnostic) *sdk.CallToolResult {
	return generatedRefusal(ct.Name, ct.Accepted, diags)
}

// generatedRefusal is a generated tool's answer to arguments that fail its
// schema: every fault, and nothing sent. accepted (nil: not known) lists
// the arguments a call may give, shown for an unknown one.
func generatedRefusal(name string, accepted func() []string, diags []invoke.Diagnostic) *sdk.CallToolResult {
	msgs := make([]string, len(diags))
	for i, d := range diags {
		msgs[i] = d.Message
	}
	te := &ToolError{Code: CodeInvalidArgument, Field: diags[0].Field, DidYouMean: diags[0].DidYouMean,
		Message: fmt.Sprintf("%s was not called: %s. Nothing was sent to the service", name, strings.Join(msgs, "; "))}
	if accepted != nil && slices.ContainsFunc(diags, func(d invoke.Diagnostic) bool {
		return d.Code == invoke.DiagUnknown || d.Code == invoke.DiagNotAnObject
	}) {
		te.Accepted, te.argNames = accepted(), true
	}
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: te.Error()}},
		StructuredContent: argumentFault{Error: te, Diagnostics: diags},
	}
}
