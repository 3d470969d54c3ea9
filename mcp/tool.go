package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	// inputJSON, when set, is the input schema already encoded (a generated
	// tool's projection); input is then nil. Decoding a large API's schemas
	// into jsonschema.Schema values only to encode them again took most of
	// the start-up time.
	inputJSON json.RawMessage
	output    *jsonschema.Schema // the success shape
	generated bool               // projected from a bundle's OpenAPI operation; never pacto_*
	// expensive says its calls count against the server's budget
	// (budget.go): bounded in number, time and bundle memory.
	expensive bool
	// dispatches says it calls the operation its arguments name (the
	// discovery call tools): the audit line names that operation too.
	dispatches bool
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
	output, err := outputSchemaFor[Out]()
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
func (t *tool) sdkTool() *sdk.Tool { return t.sdkToolShared(nil) }

// sdkToolShared is sdkTool with the encoded output schemas kept in outputs
// (when not nil) by schema: a bundle's generated tools share one output
// schema, and encoding it once per tool was a fifth of a large API's
// start-up.
func (t *tool) sdkToolShared(outputs map[*jsonschema.Schema]any) *sdk.Tool {
	output, ok := outputs[t.output]
	if !ok {
		if enc, frozen := frozenOutputs.Load(t.output); frozen {
			output = enc.(func() any)()
		} else {
			output = encodedSchema(withErrorAlternative(t.output))
		}
		if outputs != nil {
			outputs[t.output] = output
		}
	}
	return &sdk.Tool{
		Name:         t.name,
		Title:        t.title,
		Description:  t.description,
		InputSchema:  t.encodedInput(),
		OutputSchema: output,
		Annotations: &sdk.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    t.hints.readOnly,
			DestructiveHint: new(t.hints.destructive),
			IdempotentHint:  t.hints.idempotent,
			OpenWorldHint:   new(t.hints.openWorld),
		},
	}
}

func (t *tool) encodedInput() any {
	if t.inputJSON != nil {
		if shaped, err := mcpShape(t.inputJSON); err == nil {
			return json.RawMessage(shaped)
		}
		return t.inputJSON
	}
	return encodedSchema(t.input)
}

// outputSchemas holds, by Go type, the output schema newTool infers for
// a tool answering that type: every server of a process builds the same
// tools, and inferring and encoding their output schemas again, per
// server, was most of what registering a small bundle's tools cost (the
// operator registers them once per tool mode of each new digest).
var outputSchemas sync.Map // reflect.Type → func() (*jsonschema.Schema, error)

// outputSchemaFor is the output schema inferred from Out, made once a
// process and frozen (freezeOutput): nothing may change it, a tool that
// answers another shape sets its own schema in place of it.
func outputSchemaFor[Out any]() (*jsonschema.Schema, error) {
	typ := reflect.TypeFor[Out]()
	once, _ := outputSchemas.LoadOrStore(typ, sync.OnceValues(func() (*jsonschema.Schema, error) {
		s, err := jsonschema.For[Out](&jsonschema.ForOptions{TypeSchemas: rawTypeSchemas})
		if err != nil {
			return nil, err
		}
		return freezeOutput(s), nil
	}))
	return once.(func() (*jsonschema.Schema, error))()
}

// frozenOutputs holds, for each output schema frozen, its encoding as
// tools/list shows it (with the error alternative), made on first use.
var frozenOutputs sync.Map // *jsonschema.Schema → func() any

// freezeOutput records s as an output schema that is never changed
// again, shared by the tools of every server of the process, so that its
// encoding is shared too; it returns s.
func freezeOutput(s *jsonschema.Schema) *jsonschema.Schema {
	frozenOutputs.LoadOrStore(s, sync.OnceValue(func() any { return encodedSchema(withErrorAlternative(s)) }))
	return s
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
		ctx, span := toolSpan(ctx, t.name)
		defer span.End()
		ctx = withCaller(withCallRequest(ctx, req), req.Extra) // the session too: sessionOf
		if refusal := s.writeScopeRefusal(ctx, t); refusal != nil {
			return errorResult(refusal), nil
		}
		if t.expensive {
			return s.budget.run(ctx, t, req.Params.Arguments), nil
		}
		return t.call(ctx, req.Params.Arguments), nil
	}
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
