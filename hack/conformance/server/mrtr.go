package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
)

// The 2026-07-28 fixtures: tools (and a prompt) that ask the client for
// input by answering input-required (SEP-2322, multi round-trip requests)
// and complete once the client retries with the answers, the diagnostic
// tools of the suite's server-stateless scenario (SEP-2575), and a tool
// that mirrors an argument into a header (SEP-2243, x-mcp-header). They
// go through the same assembly as every other fixture; the state they
// hand out is signed, as kubepact's own confirmations are, so a tampered
// or made-up state is refused before any tool runs.

// Fixture names of the input-required scenarios, as the suite calls them.
const (
	mrtrElicitation = "test_input_required_result_elicitation"
	mrtrSampling    = "test_input_required_result_sampling"
	mrtrRoots       = "test_input_required_result_list_roots"
	mrtrState       = "test_input_required_result_request_state"
	mrtrMultiple    = "test_input_required_result_multiple_inputs"
	mrtrMultiRound  = "test_input_required_result_multi_round"
	mrtrCapability  = "test_input_required_result_capabilities"
	mrtrTampered    = "test_input_required_result_tampered_state"
	mrtrPrompt      = "test_input_required_result_prompt"

	missingCapabilityTool  = "test_missing_capability"
	streamingElicitTool    = "test_streaming_elicitation"
	loggingTool            = "test_logging_tool"
	customHeaderTool       = "test_custom_header"
	promptChangeTool       = "test_trigger_prompt_change"
	dynamicPrompt          = "test_dynamic_prompt"
	customHeaderName       = "Region"
	errMissingCapabilities = sdk.CodeMissingRequiredClientCapabilities
)

// stateSigner signs and checks the request states the fixtures hand out:
// "<round>.<mac>", the MAC over the tool's name and the round under a
// secret drawn at start.
type stateSigner struct{ secret [32]byte }

func newStateSigner() *stateSigner {
	s := &stateSigner{}
	_, _ = rand.Read(s.secret[:]) // crypto/rand.Read never fails (it panics instead)
	return s
}

func (s *stateSigner) mac(tool string, round int) string {
	h := hmac.New(sha256.New, s.secret[:])
	fmt.Fprintf(h, "%s\x00%d", tool, round)
	return hex.EncodeToString(h.Sum(nil))
}

// issue is the state of round of tool.
func (s *stateSigner) issue(tool string, round int) string {
	return strconv.Itoa(round) + "." + s.mac(tool, round)
}

// check returns the round a state of tool carries, or false for a state
// this process did not issue for tool.
func (s *stateSigner) check(tool, state string) (int, bool) {
	r, mac, ok := strings.Cut(state, ".")
	round, err := strconv.Atoi(r)
	if !ok || err != nil || round < 1 || round > 9 {
		return 0, false
	}
	return round, hmac.Equal([]byte(mac), []byte(s.mac(tool, round)))
}

// The input requests the fixtures make.
func askName(message string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Message: message, RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
}

//nolint:staticcheck // SA1019: the 2026-07-28 input-required scenarios ask for sampling and roots, deprecated by SEP-2577 but still in the protocol.
func askModel(text string, maxTokens int64) *sdk.CreateMessageParams {
	return &sdk.CreateMessageParams{Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}, MaxTokens: maxTokens}
}

// needInput is an input-required result.
func needInput(state string, asks sdk.InputRequestMap) *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: asks, RequestState: state}
}

// done is a complete fixture result with one text block.
func done(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: fixtureOutcome{Content: []string{"text"}}}
}

// answered reports whether every key has an answer.
func answered(resp sdk.InputResponseMap, keys ...string) bool {
	for _, k := range keys {
		if resp[k] == nil {
			return false
		}
	}
	return true
}

// elicitedText is the string field of an accepted elicitation answer.
func elicitedText(r sdk.InputResponse, field string) string {
	if er, ok := r.(*sdk.ElicitResult); ok {
		if v, ok := er.Content[field].(string); ok {
			return v
		}
	}
	return ""
}

// mrtrTools are the input-required fixture tools and the diagnostic ones.
//
//nolint:staticcheck // SA1019: the 2026-07-28 input-required scenarios ask for sampling and roots, deprecated by SEP-2577 but still in the protocol.
func (fx *fixtureState) mrtrTools() ([]mcp.ExtensionTool, error) {
	noArgs, err := jsonschema.For[fixtureNoArgs](nil)
	if err != nil {
		return nil, err
	}
	output, err := fixtureOutputSchema()
	if err != nil {
		return nil, err
	}
	tool := func(name, title string, run func(*sdk.CallToolRequest, sdk.InputResponseMap) *sdk.CallToolResult) mcp.ExtensionTool {
		return mcp.ExtensionTool{
			Name: name, Title: title, ReadOnly: true, Input: noArgs, Output: output,
			Description: "Conformance fixture: " + title + ". Part of the fixture family the official MCP conformance suite calls by name; test builds only.",
			Call: func(ctx context.Context, _ json.RawMessage) (*sdk.CallToolResult, error) {
				req := mcp.CallRequestOf(ctx)
				if req == nil {
					return nil, &mcp.ToolError{Code: codeClientCapability, Message: "no tools/call request in the context"}
				}
				return run(req, req.Params.InputResponses), nil
			},
		}
	}
	sign := fx.signer
	out := []mcp.ExtensionTool{
		tool(mrtrElicitation, "Ask the user's name, then greet them", func(_ *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "user_name") { // unknown keys are ignored; a missing one is asked again
				return needInput("", sdk.InputRequestMap{"user_name": askName("What is your name?")})
			}
			return done("Hello, " + elicitedText(in["user_name"], "name") + "!")
		}),
		tool(mrtrSampling, "Ask the client's model a question", func(_ *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "capital_question") {
				return needInput("", sdk.InputRequestMap{"capital_question": askModel("What is the capital of France?", 100)})
			}
			text := ""
			if r, ok := in["capital_question"].(*sdk.CreateMessageWithToolsResult); ok && len(r.Content) > 0 {
				if tc, ok := r.Content[0].(*sdk.TextContent); ok {
					text = tc.Text
				}
			}
			return done("The model answered: " + text)
		}),
		tool(mrtrRoots, "Ask the client for its roots", func(_ *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "client_roots") {
				return needInput("", sdk.InputRequestMap{"client_roots": &sdk.ListRootsParams{}})
			}
			var uris []string
			if r, ok := in["client_roots"].(*sdk.ListRootsResult); ok {
				for _, root := range r.Roots {
					uris = append(uris, root.URI)
				}
			}
			return done("The client's roots: " + strings.Join(uris, ", "))
		}),
		tool(mrtrState, "Ask for a confirmation and carry a signed state", func(req *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "confirm") || req.Params.RequestState == "" {
				return needInput(sign.issue(mrtrState, 1), sdk.InputRequestMap{"confirm": &sdk.ElicitParams{Message: "Please confirm",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}})
			}
			return done("state-ok: the request state was this server's, and the confirmation arrived")
		}),
		tool(mrtrMultiple, "Ask the user, the model and the client at once", func(req *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "user_name", "greeting", "client_roots") || req.Params.RequestState == "" {
				return needInput(sign.issue(mrtrMultiple, 1), sdk.InputRequestMap{
					"user_name":    askName("What is your name?"),
					"greeting":     askModel("Generate a greeting", 50),
					"client_roots": &sdk.ListRootsParams{},
				})
			}
			return done("All three answers arrived for " + elicitedText(in["user_name"], "name"))
		}),
		tool(mrtrMultiRound, "Ask two questions, one round each", func(req *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			round, _ := sign.check(mrtrMultiRound, req.Params.RequestState) // a bad state never gets here
			switch {
			case round == 1 && answered(in, "step1"):
				return needInput(sign.issue(mrtrMultiRound, 2), sdk.InputRequestMap{"step2": &sdk.ElicitParams{Message: "Step 2: What is your favorite color?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)}})
			case round == 2 && answered(in, "step2"):
				return done("Both rounds answered; the favorite color is " + elicitedText(in["step2"], "color"))
			}
			return needInput(sign.issue(mrtrMultiRound, 1), sdk.InputRequestMap{"step1": askName("Step 1: What is your name?")})
		}),
		tool(mrtrCapability, "Ask only through what the client declared", func(req *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if len(in) > 0 {
				return done(fmt.Sprintf("%d answer(s) arrived", len(in)))
			}
			caps := req.ClientCapabilities()
			asks := sdk.InputRequestMap{}
			if caps != nil && caps.Elicitation != nil {
				asks["user_name"] = askName("What is your name?")
			}
			if caps != nil && caps.Sampling != nil {
				asks["greeting"] = askModel("Generate a greeting", 50)
			}
			if len(asks) == 0 {
				return done("The client declared neither elicitation nor sampling: nothing to ask")
			}
			return needInput("", asks)
		}),
		tool(mrtrTampered, "Ask for a confirmation with a signed state", func(req *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "confirm") || req.Params.RequestState == "" {
				return needInput(sign.issue(mrtrTampered, 1), sdk.InputRequestMap{"confirm": &sdk.ElicitParams{Message: "Please confirm",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}})
			}
			return done("Confirmed with this server's own state")
		}),
		tool(missingCapabilityTool, "Ask the client's model; refused unless the request declares sampling", func(_ *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "greeting") {
				return needInput("", sdk.InputRequestMap{"greeting": askModel("Generate a greeting", 50)})
			}
			return done("The model answered")
		}),
		tool(streamingElicitTool, "Ask the user through the response, never a request of its own", func(_ *sdk.CallToolRequest, in sdk.InputResponseMap) *sdk.CallToolResult {
			if !answered(in, "user_name") {
				return needInput("", sdk.InputRequestMap{"user_name": askName("What is your name?")})
			}
			return done("Hello, " + elicitedText(in["user_name"], "name") + "!")
		}),
	}
	out = append(out, mcp.ExtensionTool{
		Name: loggingTool, Title: "Log three messages to the client", ReadOnly: true, Idempotent: true, Input: noArgs, Output: output,
		Description: "Conformance fixture: sends three log messages, which the client receives only if the request asked for a log level. Test builds only.",
		Call: func(ctx context.Context, _ json.RawMessage) (*sdk.CallToolResult, error) {
			_, outcome, err := logSteps(ctx, fixtureNoArgs{})
			if err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Sent 3 log messages."}}, StructuredContent: outcome}, nil
		},
	})
	out = append(out, mcp.ExtensionTool{
		Name: promptChangeTool, Title: "Add or remove a fixture prompt", Input: noArgs, Output: output,
		Description: "Conformance fixture: adds " + dynamicPrompt + " when it is absent and removes it when present, so the prompt list changes and subscribed clients are told. Test builds only.",
		Call: func(context.Context, json.RawMessage) (*sdk.CallToolResult, error) {
			srv := fx.srv.Load()
			if srv == nil {
				return nil, &mcp.ToolError{Code: codeClientCapability, Message: "the server is not registered yet"}
			}
			fx.promptMu.Lock()
			defer fx.promptMu.Unlock()
			if fx.dynamicOn {
				srv.RemovePrompts(dynamicPrompt)
			} else {
				srv.AddPrompt(&sdk.Prompt{Name: dynamicPrompt, Title: "Fixture: a prompt that comes and goes", Description: "Conformance fixture: added and removed by " + promptChangeTool + "."},
					func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
						return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "A prompt that comes and goes."}}}}, nil
					})
			}
			fx.dynamicOn = !fx.dynamicOn
			return done(fmt.Sprintf("%s present: %v", dynamicPrompt, fx.dynamicOn)), nil
		},
	})
	var headerInput jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"region":{"type":"string","description":"The region, mirrored into the Mcp-Param-Region header","x-mcp-header":"`+customHeaderName+`"}},
		"required":["region"],"additionalProperties":false}`), &headerInput); err != nil {
		return nil, err
	}
	type headerArgs struct {
		Region string `json:"region"`
	}
	ht, err := fixtureTool(customHeaderTool, "Echo an argument the client mirrors into a header", hints{readOnly: true, idempotent: true}, &headerInput,
		func(_ context.Context, in headerArgs) ([]sdk.Content, fixtureOutcome, error) {
			return []sdk.Content{&sdk.TextContent{Text: "region=" + in.Region}}, fixtureOutcome{}, nil
		})
	if err != nil {
		return nil, err
	}
	return append(out, ht), nil
}

// mrtrPromptHandler is test_input_required_result_prompt: input-required
// until the client answers user_context.
func mrtrPromptHandler(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	if req.Params.InputResponses["user_context"] == nil {
		return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{"user_context": &sdk.ElicitParams{Message: "What context should the prompt use?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)}}}, nil
	}
	return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{
		Text: "Use this context: " + elicitedText(req.Params.InputResponses["user_context"], "context")}}}}, nil
}

// signedTools are the fixtures whose request state is signed.
var signedTools = map[string]bool{mrtrState: true, mrtrMultiple: true, mrtrMultiRound: true, mrtrTampered: true}

// checkRequests is receiving middleware that answers with a JSON-RPC
// error, before the tool runs, what the suite requires to be one: a
// request state the server did not issue for the tool (-32602), and a call
// of test_missing_capability from a client that did not declare sampling
// (-32021, which the SDK answers with 400).
//
//nolint:staticcheck // SA1019: the 2026-07-28 input-required scenarios ask for sampling and roots, deprecated by SEP-2577 but still in the protocol.
func (fx *fixtureState) checkRequests(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		name, state := call.Params.Name, call.Params.RequestState
		if signedTools[name] && state != "" {
			if _, ok := fx.signer.check(name, state); !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
					"requestState failed its integrity check: it is not a state this server issued for %s (altered, made up, or from before a restart); call the tool again without requestState", name)}
			}
		}
		if name == missingCapabilityTool {
			if caps := call.ClientCapabilities(); caps == nil || caps.Sampling == nil {
				data, _ := json.Marshal(sdk.MissingRequiredClientCapabilityData{RequiredCapabilities: &sdk.ClientCapabilities{Sampling: &sdk.SamplingCapabilities{}}})
				return nil, &jsonrpc.Error{Code: errMissingCapabilities, Message: missingCapabilityTool + " needs the sampling capability, which the request's _meta does not declare; declare sampling in io.modelcontextprotocol/clientCapabilities", Data: data}
			}
		}
		return next(ctx, method, req)
	}
}
