package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/validate"
)

// Error codes of the tool-error envelope that this package produces itself.
// Families add their own (bundle/authoring's codes pass through unchanged).
// One code covers every argument fault (not an object, unknown name, missing,
// wrong type, out of range): Field, Accepted and DidYouMean tell them apart.
// It is the same code bundle/authoring uses.
const (
	CodeInvalidArgument = "INVALID_ARGUMENT" // an argument is unknown, missing, mistyped or out of range
	CodeCancelled       = "CANCELLED"        // the caller went away or the call timed out
	CodeInternal        = "INTERNAL"         // a failure on our side; details are in the server log only
)

// ToolError is the machine-readable error every tool answers with, as
// {"error": ToolError} in structuredContent of an isError result.
type ToolError struct {
	// Code is stable and machine-readable, e.g. UNKNOWN_ARGUMENT.
	Code string `json:"code" jsonschema:"stable machine-readable error code"`
	// Message is one human-readable sentence.
	Message string `json:"message" jsonschema:"human-readable explanation"`
	// Field names the argument (or contract field) at fault, if any.
	Field string `json:"field,omitempty" jsonschema:"the argument or field at fault"`
	// Accepted lists the tool's argument names on argument errors.
	Accepted []string `json:"accepted,omitempty" jsonschema:"the argument names this tool accepts"`
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

// hints are the four MCP tool annotations. Every tool states all four, so a
// client never falls back to the spec's defaults (destructive, open-world).
type hints struct {
	readOnly    bool // changes nothing anywhere
	destructive bool // may overwrite or delete what exists
	idempotent  bool // repeating the same call has no further effect
	openWorld   bool // reaches beyond the server's own workspace and data
}

// tool is one registered tool: its public description (name, schemas,
// annotations) and the function that answers a call.
type tool struct {
	name        string
	title       string
	description string
	hints       hints
	input       *jsonschema.Schema // type object, additionalProperties false
	output      *jsonschema.Schema // the success shape
	generated   bool               // projected from a bundle's OpenAPI operation; never pacto_*
	// call answers one tools/call with the raw arguments. It never panics
	// out (see handler) and always returns a result.
	call func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult
}

// writes reports whether the tool can change anything; a read-only server
// leaves such tools out.
func (t *tool) writes() bool { return !t.hints.readOnly }

// toolSpec is the public face of a tool and how its arguments are decoded.
type toolSpec struct {
	name        string
	title       string
	description string
	hints       hints
	// input is the input schema; nil infers it from the argument type, with
	// additionalProperties false.
	input *jsonschema.Schema
}

// newTool builds a tool whose arguments are checked against the input
// schema and decoded into In, and whose success value Out becomes
// structuredContent (its schema is inferred) next to the one-line summary
// run returns.
func newTool[In, Out any](spec toolSpec, run func(context.Context, In) (Out, string, error)) (*tool, error) {
	input := spec.input
	if input == nil {
		var err error
		if input, err = jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: rawTypeSchemas}); err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", spec.name, err)
		}
	}
	dec, err := newArgDecoder(input)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", spec.name, err)
	}
	output, err := jsonschema.For[Out](&jsonschema.ForOptions{TypeSchemas: rawTypeSchemas})
	if err != nil {
		return nil, fmt.Errorf("tool %s: output schema: %w", spec.name, err)
	}
	return &tool{
		name:        spec.name,
		title:       spec.title,
		description: spec.description,
		hints:       spec.hints,
		input:       input,
		output:      output,
		call: func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult {
			var in In
			if err := dec.decode(args, &in); err != nil {
				return errorResult(err)
			}
			out, summary, err := run(ctx, in)
			if err != nil {
				return errorResult(err)
			}
			return &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: summary}},
				StructuredContent: out,
			}
		},
	}, nil
}

// sdkTool is the tool as tools/list shows it. The output schema also admits
// the error envelope, because clients validate structuredContent against it
// even on isError results.
//
// Both schemas are handed over already encoded. The SDK re-encodes a
// *jsonschema.Schema by reflection whenever it needs it — on every
// tools/list, and on every tools/call of the 2026-07-28 era, where it scans
// the input schema for x-mcp-header annotations — while encoding encoded
// JSON is a copy.
func (t *tool) sdkTool() *sdk.Tool {
	return &sdk.Tool{
		Name:         t.name,
		Title:        t.title,
		Description:  t.description,
		InputSchema:  encodedSchema(t.input),
		OutputSchema: encodedSchema(withErrorAlternative(t.output)),
		Annotations: &sdk.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    t.hints.readOnly,
			DestructiveHint: new(t.hints.destructive),
			IdempotentHint:  t.hints.idempotent,
			OpenWorldHint:   new(t.hints.openWorld),
		},
	}
}

// encodedSchema returns s as JSON in the shape every MCP client accepts
// (see mcpShape), or s itself in the unexpected case that it cannot be
// encoded (the SDK then reports it when the tool is added).
func encodedSchema(s *jsonschema.Schema) any {
	raw, err := json.Marshal(s)
	if err != nil {
		return s
	}
	if shaped, err := mcpShape(raw); err == nil {
		raw = shaped
	}
	return json.RawMessage(raw)
}

// handler adapts the tool to the SDK and turns a panic into an INTERNAL
// error result: the client never sees a stack trace, the log does.
func (s *Server) handler(t *tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error(fmt.Errorf("panic: %v", p), "Tool handler panicked", "tool", t.name, "stack", string(debug.Stack()))
				res, err = errorResult(&ToolError{Code: CodeInternal, Message: "the tool failed unexpectedly; the server log has the details"}), nil
			}
		}()
		return t.call(withSession(ctx, req.Session), req.Params.Arguments), nil
	}
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

// errorSchema is the error envelope's shape as output schemas state it:
// small on purpose, because it is repeated in every tool of tools/list.
// It names only what every error carries; the optional fields of ToolError
// (field, accepted, didYouMean, findings, and a family's extras) are
// admitted because the object stays open. The full shape is documented on
// ToolError and in the server instructions, not per tool.
var errorSchema = &jsonschema.Schema{Type: "object", Required: []string{"code", "message"}}

// withErrorAlternative returns a copy of out that also admits
// {"error": ToolError}: the success fields stay required only on the success
// branch.
func withErrorAlternative(out *jsonschema.Schema) *jsonschema.Schema {
	s := out.CloneSchemas()
	s.Type, s.Types = "object", nil // a pointer result infers ["null","object"]; a result is never null
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties["error"] = errorSchema
	success := &jsonschema.Schema{Required: s.Required}
	if len(s.Required) == 0 {
		success = &jsonschema.Schema{Not: &jsonschema.Schema{Required: []string{"error"}}}
	}
	s.Required = nil
	s.AnyOf = []*jsonschema.Schema{success, {Required: []string{"error"}}}
	return s
}
