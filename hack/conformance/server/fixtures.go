// Command server is kubepact's MCP server with the official MCP conformance
// suite's fixtures added (hack/conformance/run.sh runs the suite against
// it): the tools, resources and prompts that @modelcontextprotocol/conformance
// calls by fixed names, served as an mcp.Extension through the product's
// own assembly — the same transports and era routing, strict argument
// decoding, error envelope, audit and metrics middleware — so the suite
// proves the protocol plumbing every family shares. It takes the flags of
// `kubepact mcp` (without a bundle); the fixture family is on only when
// --families names it. The release binary has none of this.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
)

// familyConformance is the MCP conformance suite's fixture tools,
// resources and prompts, named as the suite calls them.
const familyConformance mcp.Family = "conformance"

// fixtureExtension is the fixture family as an extension of the server.
func fixtureExtension() (*mcp.Extension, error) {
	fx, tools, err := fixtureTools()
	if err != nil {
		return nil, err
	}
	return &mcp.Extension{
		Name:      familyConformance,
		Summary:   "conformance — the fixture tools, resources and prompts the official MCP conformance suite calls by name (test_*, test://...); a test build only, never part of a release",
		Tools:     tools,
		Configure: fx.configure,
		Register:  fx.register,
	}, nil
}

// hints are a fixture tool's annotations.
type hints struct{ readOnly, idempotent bool }

// Error codes of fixture tool results.
const (
	codeFixtureError     = "FIXTURE_ERROR"         // test_error_handling fails on purpose
	codeClientCapability = "CLIENT_CAPABILITY"     // the client did not declare what the tool asks of it
	codeClientRequest    = "CLIENT_REQUEST_FAILED" // a sampling or elicitation request to the client failed
)

// Fixture resource URIs and prompt names, as the suite's scenarios use them.
const (
	staticTextURI      = "test://static-text"
	staticBinaryURI    = "test://static-binary"
	watchedURI         = "test://watched-resource"
	templateURI        = "test://template/{id}/data"
	embeddedURI        = "test://embedded-resource"
	mixedURI           = "test://mixed-content-resource"
	promptSimple       = "test_simple_prompt"
	promptWithArgs     = "test_prompt_with_arguments"
	promptWithResource = "test_prompt_with_embedded_resource"
	promptWithImage    = "test_prompt_with_image"
)

// fixtureStep is the pause between the notifications of the logging and
// progress fixtures, so the client sees them arrive during the call.
const fixtureStep = 50 * time.Millisecond

// fixtureState carries the fixture family's server options, resources
// and prompts (configure, register), and the key that signs the request
// states of the input-required fixtures (mrtr.go).
type fixtureState struct {
	signer *stateSigner
	srv    atomic.Pointer[sdk.Server] // set by register, for test_trigger_prompt_change
	// promptMu guards dynamicOn: whether test_trigger_prompt_change last
	// added its prompt.
	promptMu  sync.Mutex
	dynamicOn bool
}

// fixtureOutcome is every fixture tool's structuredContent: which content
// blocks it returned and what it sent to or heard from the client.
type fixtureOutcome struct {
	Content       []string       `json:"content" jsonschema:"the types of the content blocks returned, in order"`
	Notifications int            `json:"notifications,omitempty" jsonschema:"log or progress notifications sent during the call"`
	Response      string         `json:"response,omitempty" jsonschema:"the text the client's model answered a sampling request with"`
	Action        string         `json:"action,omitempty" jsonschema:"the user's answer to an elicitation request: accept, decline or cancel"`
	Answer        map[string]any `json:"answer,omitempty" jsonschema:"the values the user entered on accept"`
}

type fixtureNoArgs struct{}

// SamplingArgs are test_sampling's arguments.
type SamplingArgs struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

// ElicitationArgs are test_elicitation's arguments.
type ElicitationArgs struct {
	Message string `json:"message" jsonschema:"the message to show the user"`
}

// fixtureTools builds the fixture tools; the resources, prompts and
// server options follow in configure and register.
func fixtureTools() (*fixtureState, []mcp.ExtensionTool, error) {
	fx := &fixtureState{signer: newStateSigner()}
	quiet := hints{readOnly: true, idempotent: true}
	asks := hints{readOnly: true} // asks the client's model or user: the answer may differ each time

	var out []mcp.ExtensionTool
	var errs []error
	add := func(t mcp.ExtensionTool, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		out = append(out, t)
	}
	add(newFixtureTool("test_simple_text", "Return one text block", quiet, fixedContent(
		&sdk.TextContent{Text: "This is a simple text response for testing."})))
	add(newFixtureTool("test_image_content", "Return one image block", quiet, fixedContent(
		&sdk.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"})))
	add(newFixtureTool("test_audio_content", "Return one audio block", quiet, fixedContent(
		&sdk.AudioContent{Data: silentWAV(), MIMEType: "audio/wav"})))
	add(newFixtureTool("test_embedded_resource", "Return one embedded resource", quiet, fixedContent(
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: embeddedURI, MIMEType: "text/plain", Text: "This is an embedded resource content."}})))
	add(newFixtureTool("test_multiple_content_types", "Return text, image and resource blocks", quiet, fixedContent(
		&sdk.TextContent{Text: "Multiple content types test:"},
		&sdk.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: mixedURI, MIMEType: "application/json", Text: `{"test":"data","value":123}`}})))
	add(newFixtureTool("test_error_handling", "Fail on purpose", quiet,
		func(context.Context, fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
			return nil, fixtureOutcome{}, &mcp.ToolError{Code: codeFixtureError, Message: "This tool intentionally returns an error for testing"}
		}))
	add(newFixtureTool("test_tool_with_logging", "Send three log messages", quiet, logSteps))
	add(newFixtureTool("test_tool_with_progress", "Report progress in three steps", quiet, progressSteps))
	add(newFixtureTool("test_sampling", "Ask the client's model", asks, sample))
	add(newFixtureTool("test_elicitation", "Ask the user for a name and an email", asks,
		func(ctx context.Context, in ElicitationArgs) ([]sdk.Content, fixtureOutcome, error) {
			return elicit(ctx, in.Message, json.RawMessage(`{"type":"object","properties":{
				"username":{"type":"string","description":"User's response"},
				"email":{"type":"string","description":"User's email address"}},
				"required":["username","email"]}`), "User response")
		}))
	add(newFixtureTool("test_elicitation_sep1034_defaults", "Ask the user with a default for every primitive type", asks,
		func(ctx context.Context, _ fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
			return elicit(ctx, "Please confirm or change these values.", json.RawMessage(`{"type":"object","properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}}}`), "Elicitation completed")
		}))
	add(newFixtureTool("test_elicitation_sep1330_enums", "Ask the user with every enum form", asks,
		func(ctx context.Context, _ fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
			return elicit(ctx, "Please pick from each list.", json.RawMessage(`{"type":"object","properties":{
				"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`), "Elicitation completed")
		}))
	add(jsonSchema2020Tool())
	mrtr, err := fx.mrtrTools()
	errs = append(errs, err)
	out = append(out, mrtr...)
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return fx, out, nil
}

// configure turns on what the fixtures use beyond tools: logging to the
// client, resource subscriptions and argument completion.
//
//nolint:staticcheck // SA1019: the suite tests logging and sampling, deprecated in 2026-07-28 but in force for 2025-11-25 sessions.
func (fx *fixtureState) configure(o *sdk.ServerOptions) {
	if o.Capabilities == nil {
		o.Capabilities = &sdk.ServerCapabilities{}
	}
	o.Capabilities.Logging = &sdk.LoggingCapabilities{}
	o.SubscribeHandler = func(_ context.Context, req *sdk.SubscribeRequest) error { return fx.subscribable(req.Params.URI) }
	o.UnsubscribeHandler = func(_ context.Context, req *sdk.UnsubscribeRequest) error { return fx.subscribable(req.Params.URI) }
	o.CompletionHandler = fx.complete
}

// subscribable accepts subscriptions to the fixture resources only. The
// SDK keeps the subscriber list; the fixtures never change, so no update
// is ever sent.
func (*fixtureState) subscribable(uri string) error {
	switch uri {
	case staticTextURI, staticBinaryURI, watchedURI:
		return nil
	}
	return sdk.ResourceNotFoundError(uri)
}

// register publishes the fixture resources and prompts, and the
// middleware that hands a call's progress token to the tool.
func (fx *fixtureState) register(srv *sdk.Server) {
	text := func(uri, mime, body string) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	srv.AddResource(&sdk.Resource{URI: staticTextURI, Name: "static-text", Title: "Fixture: static text", MIMEType: "text/plain", Description: "Conformance fixture: a fixed text."},
		text(staticTextURI, "text/plain", "This is the content of the static text resource."))
	srv.AddResource(&sdk.Resource{URI: staticBinaryURI, Name: "static-binary", Title: "Fixture: static PNG", MIMEType: "image/png", Description: "Conformance fixture: a 1×1 PNG as a blob."},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: staticBinaryURI, MIMEType: "image/png", Blob: redPixelPNG()}}}, nil
		})
	srv.AddResource(&sdk.Resource{URI: watchedURI, Name: "watched-resource", Title: "Fixture: a resource to subscribe to", MIMEType: "text/plain", Description: "Conformance fixture: accepts subscriptions; never changes."},
		text(watchedURI, "text/plain", "A fixture resource that never changes."))
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: templateURI, Name: "template-data", Title: "Fixture: data by id", MIMEType: "application/json", Description: "Conformance fixture: a JSON document naming the id in the URI."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			uri := req.Params.URI
			rest, prefixed := strings.CutPrefix(uri, "test://template/")
			id, suffixed := strings.CutSuffix(rest, "/data")
			if !prefixed || !suffixed || id == "" || strings.Contains(id, "/") {
				return nil, sdk.ResourceNotFoundError(uri)
			}
			raw, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}, nil
		})

	user := func(c sdk.Content) *sdk.PromptMessage { return &sdk.PromptMessage{Role: "user", Content: c} }
	srv.AddPrompt(&sdk.Prompt{Name: promptSimple, Title: "Fixture: a prompt without arguments", Description: "Conformance fixture: one text message."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{user(&sdk.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: promptWithArgs, Title: "Fixture: a prompt with two arguments", Description: "Conformance fixture: one text message quoting arg1 and arg2 (both completable).", Arguments: []*sdk.PromptArgument{
		{Name: "arg1", Description: "First test argument", Required: true},
		{Name: "arg2", Description: "Second test argument", Required: true},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		args, err := promptArgs(req, "arg1", "arg2")
		if err != nil {
			return nil, err
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{user(&sdk.TextContent{
			Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])})}}, nil
	})
	srv.AddPrompt(&sdk.Prompt{Name: promptWithResource, Title: "Fixture: a prompt embedding a resource", Description: "Conformance fixture: an embedded text resource at resourceUri, then a text message.", Arguments: []*sdk.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		args, err := promptArgs(req, "resourceUri")
		if err != nil {
			return nil, err
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			user(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: args["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
			user(&sdk.TextContent{Text: "Please process the embedded resource above."}),
		}}, nil
	})
	srv.AddPrompt(&sdk.Prompt{Name: promptWithImage, Title: "Fixture: a prompt with an image", Description: "Conformance fixture: a 1×1 PNG, then a text message."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				user(&sdk.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"}),
				user(&sdk.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})

	srv.AddPrompt(&sdk.Prompt{Name: mrtrPrompt, Title: "Fixture: a prompt that asks the user first", Description: "Conformance fixture: input-required until the user gives a context (2026-07-28)."},
		mrtrPromptHandler)

	srv.AddReceivingMiddleware(withProgressToken, fx.checkRequests)
	fx.srv.Store(srv)
}

// promptArgs returns the named prompt arguments, or an invalid-params
// error naming the first missing or unknown one.
func promptArgs(req *sdk.GetPromptRequest, names ...string) (map[string]string, error) {
	args := req.Params.Arguments
	for name := range args {
		if !slices.Contains(names, name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: unknown argument %q (accepted: %s)", req.Params.Name, name, strings.Join(names, ", "))}
		}
	}
	for _, name := range names {
		if args[name] == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: argument %q is required", req.Params.Name, name)}
		}
	}
	return args, nil
}

// completionValues are the suggestions per argument of the fixture prompt
// with arguments; completion returns those starting with the typed value.
var completionValues = map[string][]string{
	"arg1": {"hello", "help", "testValue1"},
	"arg2": {"test", "testValue2", "world"},
}

// complete answers completion/complete for the prompt with arguments and
// for the template's id (no suggestions: any id works).
func (*fixtureState) complete(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	ref, arg := req.Params.Ref, req.Params.Argument
	values := []string{}
	switch {
	case ref.Type == "ref/prompt" && ref.Name == promptWithArgs:
		candidates, ok := completionValues[arg.Name]
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s has no argument %q", ref.Name, arg.Name)}
		}
		for _, v := range candidates {
			if strings.HasPrefix(v, arg.Value) {
				values = append(values, v)
			}
		}
	case ref.Type == "ref/resource" && ref.URI == templateURI && arg.Name == "id":
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("nothing to complete for %s %s%s argument %q", ref.Type, ref.Name, ref.URI, arg.Name)}
	}
	return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}

// fixtureOutputSchema is the output schema every fixture tool shares.
var fixtureOutputSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	return jsonschema.For[fixtureOutcome](nil)
})

// newFixtureTool builds a fixture tool the way newTool builds a family's:
// arguments decoded strictly into In, errors in the envelope. The
// difference is the content: run returns the blocks the scenario expects
// (images, audio, resources), and structuredContent says which they are.
func newFixtureTool[In any](name, title string, h hints, run func(context.Context, In) ([]sdk.Content, fixtureOutcome, error)) (mcp.ExtensionTool, error) {
	input, err := jsonschema.For[In](nil)
	if err != nil {
		return mcp.ExtensionTool{}, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	return fixtureTool(name, title, h, input, run)
}

func fixtureTool[In any](name, title string, h hints, input *jsonschema.Schema,
	run func(context.Context, In) ([]sdk.Content, fixtureOutcome, error)) (mcp.ExtensionTool, error) {
	output, err := fixtureOutputSchema()
	if err != nil {
		return mcp.ExtensionTool{}, fmt.Errorf("tool %s: output schema: %w", name, err)
	}
	return mcp.ExtensionTool{
		Name:        name,
		Title:       title,
		Description: "Conformance fixture: " + title + ". Part of the fixture family the official MCP conformance suite calls by name; test builds only.",
		ReadOnly:    h.readOnly,
		Idempotent:  h.idempotent,
		Input:       input,
		Output:      output,
		Call: func(ctx context.Context, args json.RawMessage) (*sdk.CallToolResult, error) {
			// The server checked args against input; they decode.
			var in In
			if len(args) > 0 {
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, err
				}
			}
			content, out, err := run(ctx, in)
			if err != nil {
				return nil, err
			}
			out.Content = contentTypes(content)
			return &sdk.CallToolResult{Content: content, StructuredContent: out}, nil
		},
	}, nil
}

// fixedContent answers every call with the same blocks.
func fixedContent(content ...sdk.Content) func(context.Context, fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
	return func(context.Context, fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
		return content, fixtureOutcome{}, nil
	}
}

func contentTypes(content []sdk.Content) []string {
	kinds := make([]string, 0, len(content))
	for _, c := range content {
		switch c.(type) {
		case *sdk.TextContent:
			kinds = append(kinds, "text")
		case *sdk.ImageContent:
			kinds = append(kinds, "image")
		case *sdk.AudioContent:
			kinds = append(kinds, "audio")
		case *sdk.EmbeddedResource:
			kinds = append(kinds, "resource")
		default:
			kinds = append(kinds, fmt.Sprintf("%T", c))
		}
	}
	return kinds
}

// callingSession is the session of the tool call in ctx.
func callingSession(ctx context.Context) (*sdk.ServerSession, error) {
	ss := mcp.SessionOf(ctx)
	if ss == nil {
		return nil, &mcp.ToolError{Code: codeClientCapability, Message: "no client session to talk to"}
	}
	return ss, nil
}

// logSteps sends three info-level log messages, one step apart. The
// session's level decides whether the client receives them (none before
// logging/setLevel, as the SDK reads the spec).
//
//nolint:staticcheck // SA1019: the suite tests logging and sampling, deprecated in 2026-07-28 but in force for 2025-11-25 sessions.
func logSteps(ctx context.Context, _ fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
	ss, err := callingSession(ctx)
	if err != nil {
		return nil, fixtureOutcome{}, err
	}
	msgs := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	for i, msg := range msgs {
		if i > 0 {
			if err := pause(ctx); err != nil {
				return nil, fixtureOutcome{}, err
			}
		}
		if err := ss.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "conformance", Data: msg}); err != nil {
			return nil, fixtureOutcome{}, &mcp.ToolError{Code: codeClientRequest, Message: "sending a log message: " + err.Error()}
		}
	}
	return []sdk.Content{&sdk.TextContent{Text: "Sent 3 log messages."}}, fixtureOutcome{Notifications: len(msgs)}, nil
}

// progressTokenKey carries a tools/call's progress token to the tool.
type progressTokenKey struct{}

// withProgressToken is receiving middleware: a tool sees only its
// arguments, so the token from the request's _meta travels in the context.
func withProgressToken(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil {
			if tok := call.Params.GetProgressToken(); tok != nil {
				ctx = context.WithValue(ctx, progressTokenKey{}, tok)
			}
		}
		return next(ctx, method, req)
	}
}

// progressSteps reports 0, 50 and 100 of 100, one step apart, when the
// call carries a progress token; without one it only takes the steps.
func progressSteps(ctx context.Context, _ fixtureNoArgs) ([]sdk.Content, fixtureOutcome, error) {
	ss, err := callingSession(ctx)
	if err != nil {
		return nil, fixtureOutcome{}, err
	}
	tok := ctx.Value(progressTokenKey{})
	sent := 0
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := pause(ctx); err != nil {
				return nil, fixtureOutcome{}, err
			}
		}
		if tok == nil {
			continue
		}
		if err := ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100, Message: fmt.Sprintf("step %d of 3", i+1)}); err != nil {
			return nil, fixtureOutcome{}, &mcp.ToolError{Code: codeClientRequest, Message: "sending a progress notification: " + err.Error()}
		}
		sent++
	}
	return []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("Done in 3 steps; %d progress notifications sent.", sent)}}, fixtureOutcome{Notifications: sent}, nil
}

func pause(ctx context.Context) error {
	t := time.NewTimer(fixtureStep)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// sample asks the client's model to answer the prompt.
//
//nolint:staticcheck // SA1019: the suite tests logging and sampling, deprecated in 2026-07-28 but in force for 2025-11-25 sessions.
func sample(ctx context.Context, in SamplingArgs) ([]sdk.Content, fixtureOutcome, error) {
	ss, err := callingSession(ctx)
	if err != nil {
		return nil, fixtureOutcome{}, err
	}
	if p := ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Sampling == nil {
		return nil, fixtureOutcome{}, &mcp.ToolError{Code: codeClientCapability, Message: "the client did not declare the sampling capability"}
	}
	res, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{
		Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Prompt}}},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, fixtureOutcome{}, &mcp.ToolError{Code: codeClientRequest, Message: "sampling/createMessage: " + err.Error()}
	}
	answer := ""
	if tc, ok := res.Content.(*sdk.TextContent); ok {
		answer = tc.Text
	}
	return []sdk.Content{&sdk.TextContent{Text: "LLM response: " + answer}}, fixtureOutcome{Response: answer}, nil
}

// elicit asks the user to fill in schema and reports the answer as
// "<label>: action=..., content=...".
func elicit(ctx context.Context, message string, schema json.RawMessage, label string) ([]sdk.Content, fixtureOutcome, error) {
	ss, err := callingSession(ctx)
	if err != nil {
		return nil, fixtureOutcome{}, err
	}
	// Elicit itself refuses a client without the elicitation capability.
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, fixtureOutcome{}, &mcp.ToolError{Code: codeClientRequest, Message: "elicitation/create: " + err.Error()}
	}
	raw, err := json.Marshal(res.Content)
	if err != nil {
		return nil, fixtureOutcome{}, err
	}
	text := fmt.Sprintf("%s: action=%s, content=%s", label, res.Action, raw)
	return []sdk.Content{&sdk.TextContent{Text: text}}, fixtureOutcome{Action: res.Action, Answer: res.Content}, nil
}

// jsonSchema2020Tool is the pending suite's json_schema_2020_12_tool: its
// input schema uses $schema, $defs and $ref, which tools/list must pass on
// untouched. The one argument decoder resolves each property's $ref
// against the input schema's $defs, as it does for generated tools.
func jsonSchema2020Tool() (mcp.ExtensionTool, error) {
	var input jsonschema.Schema
	if err := json.Unmarshal([]byte(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
		"properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
		"additionalProperties": false
	}`), &input); err != nil {
		return mcp.ExtensionTool{}, err
	}
	type args struct {
		Name    string          `json:"name"`
		Address json.RawMessage `json:"address"`
	}
	return fixtureTool("json_schema_2020_12_tool", "Accept a JSON Schema 2020-12 input", hints{readOnly: true, idempotent: true}, &input,
		func(_ context.Context, in args) ([]sdk.Content, fixtureOutcome, error) {
			return []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("Received name=%q, address=%s", in.Name, orNull(in.Address))}}, fixtureOutcome{}, nil
		})
}

func orNull(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	return string(raw)
}

// redPixelPNG is a 1×1 red PNG, encoded once.
var redPixelPNG = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // an in-memory 1×1 image: fails never
	}
	return b.Bytes()
})

// silentWAV is 10 ms of 8-bit mono silence at 8 kHz: a RIFF/WAVE header
// and 80 samples at the unsigned midpoint.
var silentWAV = sync.OnceValue(func() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) } // writes to a bytes.Buffer do not fail
	b.WriteString("RIFF")
	w(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	w(uint32(16))   // fmt chunk size
	w(uint16(1))    // PCM
	w(uint16(1))    // mono
	w(uint32(rate)) // sample rate
	w(uint32(rate)) // byte rate: rate × 1 channel × 1 byte
	w(uint16(1))    // block align
	w(uint16(8))    // bits per sample
	b.WriteString("data")
	w(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples))
	return b.Bytes()
})
