package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
)

// fixtureClient records what the server sends it during calls and answers
// sampling and elicitation requests.
type fixtureClient struct {
	mu       sync.Mutex
	logs     []string
	progress []float64
}

// connect joins fc to s in memory, speaking protocol version (the suite
// speaks 2025-11-25: sessions, where the server may ask the client).
//
//nolint:staticcheck // SA1019: the suite tests logging and sampling, deprecated in 2026-07-28 but in force for 2025-11-25 sessions.
func (fc *fixtureClient) connect(t *testing.T, s *mcp.Server, version string) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	c := sdk.NewClient(&sdk.Implementation{Name: "fixture-test", Version: "v0"}, &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &sdk.TextContent{Text: "forty-two"}}, nil
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			msg, _ := req.Params.Data.(string)
			fc.logs = append(fc.logs, msg)
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			fc.progress = append(fc.progress, req.Params.Progress)
		},
	})
	cs, err := c.Connect(t.Context(), ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// newTestServer builds a server with the fixture extension over a
// temporary workspace; families nil means the defaults.
func newTestServer(t *testing.T, families []mcp.Family) *mcp.Server {
	t.Helper()
	fx, err := fixtureExtension()
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcp.NewServer(t.Context(), &mcp.Options{Workspace: t.TempDir(), Families: families, Extensions: []*mcp.Extension{fx}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newFixtureServer(t *testing.T) *mcp.Server {
	t.Helper()
	return newTestServer(t, []mcp.Family{mcp.FamilyAuthoring, familyConformance})
}

// structured decodes a result's structuredContent.
func structured(t testing.TB, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structuredContent: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structuredContent %s is not an object: %v", raw, err)
	}
	return m
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func errorCode(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		return ""
	}
	e, _ := structured(t, res)["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// TestFixtureToolsInMemory calls every fixture tool through the real
// assembly and checks content, notifications and the error envelope.
//
//nolint:staticcheck // SA1019: the suite tests logging and sampling, deprecated in 2026-07-28 but in force for 2025-11-25 sessions.
func TestFixtureToolsInMemory(t *testing.T) {
	s := newFixtureServer(t)
	fc := &fixtureClient{}
	cs := fc.connect(t, s, "2025-11-25")
	if err := cs.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("SetLoggingLevel: %v", err)
	}

	tests := []struct {
		tool      string
		args      map[string]any
		progress  bool
		wantTypes []string // content types; nil for an error
		wantText  string   // substring of the text content
		wantCode  string   // error code; "" for success
	}{
		{tool: "test_simple_text", wantTypes: []string{"text"}, wantText: "simple text response"},
		{tool: "test_image_content", wantTypes: []string{"image"}},
		{tool: "test_audio_content", wantTypes: []string{"audio"}},
		{tool: "test_embedded_resource", wantTypes: []string{"resource"}},
		{tool: "test_multiple_content_types", wantTypes: []string{"text", "image", "resource"}, wantText: "Multiple content types"},
		{tool: "test_error_handling", wantCode: codeFixtureError, wantText: "intentionally returns an error"},
		{tool: "test_tool_with_logging", wantTypes: []string{"text"}, wantText: "3 log messages"},
		{tool: "test_tool_with_progress", progress: true, wantTypes: []string{"text"}, wantText: "3 progress notifications"},
		{tool: "test_tool_with_progress", wantTypes: []string{"text"}, wantText: "0 progress notifications"},
		{tool: "test_sampling", args: map[string]any{"prompt": "What is six times seven?"}, wantTypes: []string{"text"}, wantText: "LLM response: forty-two"},
		{tool: "test_elicitation", args: map[string]any{"message": "Who are you?"}, wantTypes: []string{"text"}, wantText: `action=accept, content={"email":"ada@example.com","username":"ada"}`},
		{tool: "json_schema_2020_12_tool", args: map[string]any{"name": "n", "address": map[string]any{"city": "Lyon"}}, wantTypes: []string{"text"}, wantText: `"city":"Lyon"`},
		// Strict decoding applies to fixtures as to every tool.
		{tool: "test_simple_text", args: map[string]any{"verbose": true}, wantCode: mcp.CodeInvalidArgument, wantText: `unknown argument "verbose"`},
		{tool: "test_sampling", wantCode: mcp.CodeInvalidArgument, wantText: `argument "prompt" is required`},
		{tool: "json_schema_2020_12_tool", args: map[string]any{"address": map[string]any{"city": 7}}, wantCode: mcp.CodeInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			params := &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args}
			if tc.progress {
				params.SetProgressToken("tok-" + tc.tool)
			}
			res, err := cs.CallTool(t.Context(), params)
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			if got := errorCode(t, res); got != tc.wantCode {
				t.Fatalf("error code %q, want %q (text %q)", got, tc.wantCode, text(res))
			}
			if tc.wantCode == "" {
				if diff := cmp.Diff(contentTypes(res.Content), tc.wantTypes); diff != "" {
					t.Errorf("content types (-got +want):\n%s", diff)
				}
				if got := structured(t, res)["content"]; len(got.([]any)) != len(tc.wantTypes) {
					t.Errorf("structuredContent.content = %v, want %d entries", got, len(tc.wantTypes))
				}
			}
			if got := text(res); tc.wantText != "" && !strings.Contains(got, tc.wantText) {
				t.Errorf("text %q lacks %q", got, tc.wantText)
			}
		})
	}

	fc.mu.Lock()
	defer fc.mu.Unlock()
	if diff := cmp.Diff(fc.logs, []string{"Tool execution started", "Tool processing data", "Tool execution completed"}); diff != "" {
		t.Errorf("log messages (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(fc.progress, []float64{0, 50, 100}); diff != "" {
		t.Errorf("progress (-got +want):\n%s", diff)
	}
}

// TestFixtureResourcesPromptsCompletion reads the fixture resources, gets
// the prompts and completes the prompt's argument.
//
//nolint:staticcheck // SA1019: the suite tests logging and sampling, deprecated in 2026-07-28 but in force for 2025-11-25 sessions.
func TestFixtureResourcesPromptsCompletion(t *testing.T) {
	s := newFixtureServer(t)
	cs := (&fixtureClient{}).connect(t, s, "2025-11-25")
	ctx := t.Context()

	caps := cs.InitializeResult().Capabilities
	if caps.Logging == nil || caps.Completions == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil {
		t.Errorf("capabilities %+v: want logging, completions, resources with subscribe, prompts", caps)
	}

	for _, tc := range []struct{ uri, mime, text string }{
		{staticTextURI, "text/plain", "This is the content of the static text resource."},
		{staticBinaryURI, "image/png", ""},
		{"test://template/123/data", "application/json", `{"data":"Data for ID: 123","id":"123","templateTest":true}`},
	} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: tc.uri})
		if err != nil {
			t.Errorf("read %s: %v", tc.uri, err)
			continue
		}
		c := res.Contents[0]
		if c.URI != tc.uri || c.MIMEType != tc.mime || c.Text != tc.text || (tc.text == "" && len(c.Blob) == 0) {
			t.Errorf("read %s = {uri %s, mime %s, text %q, %d blob bytes}", tc.uri, c.URI, c.MIMEType, c.Text, len(c.Blob))
		}
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://template/1/2/data"}); err == nil {
		t.Error("read test://template/1/2/data: want resource-not-found")
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: watchedURI}); err != nil {
		t.Errorf("subscribe: %v", err)
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: watchedURI}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://nowhere"}); err == nil {
		t.Error("subscribe test://nowhere: want an error")
	}

	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: promptWithArgs, Arguments: map[string]string{"arg1": "hello", "arg2": "world"}})
	if err != nil {
		t.Fatalf("get prompt: %v", err)
	}
	if tc, _ := got.Messages[0].Content.(*sdk.TextContent); tc == nil || tc.Text != "Prompt with arguments: arg1='hello', arg2='world'" {
		t.Errorf("prompt message %+v", got.Messages[0].Content)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: promptWithArgs, Arguments: map[string]string{"arg1": "hello"}}); err == nil {
		t.Error("get prompt without arg2: want an error")
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatalf("list prompts: %v", err)
	}
	for _, p := range prompts.Prompts {
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
	}

	comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: promptWithArgs}, Argument: sdk.CompleteParamsArgument{Name: "arg1", Value: "hel"}})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if diff := cmp.Diff(comp.Completion.Values, []string{"hello", "help"}); diff != "" {
		t.Errorf("completion values (-got +want):\n%s", diff)
	}
}

// TestFixturesAreAFamily checks the fixtures are opt-in and described like
// any family, in pacto_server_info and the instructions.
func TestFixturesAreAFamily(t *testing.T) {
	if names := newTestServer(t, nil).ToolNames(); slices.Contains(names, "test_simple_text") {
		t.Errorf("default families include fixtures: %v", names)
	}
	cs := (&fixtureClient{}).connect(t, newFixtureServer(t), "2025-11-25")
	raw, err := json.Marshal(call(t, cs, "pacto_server_info", map[string]any{}).StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var info mcp.ServerInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf("pacto_server_info %s: %v", raw, err)
	}
	var fam *mcp.FamilyInfo
	for i := range info.Families {
		if info.Families[i].Name == string(familyConformance) {
			fam = &info.Families[i]
		}
	}
	if fam == nil || !fam.Enabled || !slices.Contains(fam.Tools, "test_simple_text") || !slices.Contains(fam.Tools, "test_sampling") || slices.Contains(fam.Tools, "pacto_server_info") {
		t.Errorf("pacto_server_info families %+v: want conformance on with exactly its fixture tools", info.Families)
	}
	if instr := cs.InitializeResult().Instructions; !strings.Contains(instr, "conformance — ") {
		t.Errorf("instructions do not describe the conformance family:\n%s", instr)
	}
}

// TestFixturesStatelessEra: a 2026-07-28 request cannot be answered with a
// server-to-client request, so sampling is a tool error there, not a hang.
func TestFixturesStatelessEra(t *testing.T) {
	s := newFixtureServer(t)
	cs := (&fixtureClient{}).connect(t, s, "2026-07-28")
	res := call(t, cs, "test_sampling", map[string]any{"prompt": "hi"})
	if got := errorCode(t, res); got != codeClientRequest {
		t.Errorf("test_sampling on 2026-07-28: code %q (text %q), want %s", got, text(res), codeClientRequest)
	}
}
