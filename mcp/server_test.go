package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// logSink collects formatted log lines for assertions.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{})
}

func (l *logSink) matching(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// newTestServer builds a server over a temporary workspace.
func newTestServer(t testing.TB, opts *Options) *Server {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Workspace == "" {
		opts.Workspace = t.TempDir()
	}
	s, err := NewServer(t.Context(), opts)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// connect joins a client to s over in-memory transports.
func connect(ctx context.Context, t testing.TB, s *Server) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// addTestTool registers an extra tool the way families do, for plumbing tests.
func addTestTool(t testing.TB, s *Server, tl *tool) {
	t.Helper()
	s.tools[tl.name] = tl
	s.sdk.AddTool(tl.sdkTool(), s.handler(tl))
}

// structured decodes a result's structuredContent (any Go value or raw JSON).
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

type echoArgs struct {
	Name   string `json:"name"`
	Count  int    `json:"count,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
}

type echoOut struct {
	Greeting string `json:"greeting"`
}

func echoTool(t testing.TB) *tool {
	t.Helper()
	tl, err := newTool(toolSpec{name: "pacto_test_echo", title: "Echo", description: "Echo for tests.", hints: hints{readOnly: true, idempotent: true}},
		func(_ context.Context, in echoArgs) (echoOut, string, error) {
			if in.Name == "panic" {
				panic("boom")
			}
			if in.Name == "fail" {
				return echoOut{}, "", fmt.Errorf("dialing the echo backend: %w", errors.New("dial tcp 10.0.0.7:443: i/o timeout"))
			}
			return echoOut{Greeting: "hello " + in.Name}, "said hello", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestServerInfoInMemory(t *testing.T) {
	ws := t.TempDir()
	s := newTestServer(t, &Options{Workspace: ws, ReadOnly: true, Version: "v1.2.3"})
	cs := connect(t.Context(), t, s)

	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "read-only") {
		t.Errorf("instructions do not mention read-only:\n%s", got)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if res.IsError {
		t.Fatalf("pacto_server_info failed: %s", text(res))
	}
	got := structured(t, res)
	want := map[string]any{"mode": "read-only", "version": "v1.2.3", "workspace": ws, "name": "kubepact"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("structuredContent[%q] = %v, want %v", k, got[k], v)
		}
	}
	if txt := text(res); strings.HasPrefix(strings.TrimSpace(txt), "{") {
		t.Errorf("text content is a JSON dump, want a summary: %s", txt)
	}
}

func TestToolErrors(t *testing.T) {
	logs := &logSink{}
	reg := prometheus.NewRegistry()
	s := newTestServer(t, &Options{Logger: logs.logger(), Registerer: reg})
	addTestTool(t, s, echoTool(t))
	cs := connect(t.Context(), t, s)

	tests := []struct {
		name string
		args any
		want *ToolError
	}{{
		name: "unknown argument with suggestion",
		args: map[string]any{"name": "x", "dryRun": true},
		want: &ToolError{Code: CodeInvalidArgument, Field: "dryRun", Message: `unknown argument "dryRun"`, Accepted: []string{"count", "dry_run", "name"}, DidYouMean: "dry_run"},
	}, {
		name: "case is significant",
		args: map[string]any{"Name": "x"},
		want: &ToolError{Code: CodeInvalidArgument, Field: "Name", Message: `unknown argument "Name"`, Accepted: []string{"count", "dry_run", "name"}, DidYouMean: "name"},
	}, {
		name: "missing required",
		args: map[string]any{"count": 1},
		want: &ToolError{Code: CodeInvalidArgument, Field: "name", Message: `argument "name" is required: a string`, Accepted: []string{"count", "dry_run", "name"}},
	}, {
		name: "wrong type",
		args: map[string]any{"name": "x", "count": "three"},
		want: &ToolError{Code: CodeInvalidArgument, Field: "count", Message: `"count" must be an integer; got the string "three"`},
	}, {
		name: "not an object",
		args: json.RawMessage(`[1,2]`),
		want: &ToolError{Code: CodeInvalidArgument, Message: `the arguments must be one JSON object of named arguments, e.g. {"count": ...}; got an array of 2 item(s)`, Accepted: []string{"count", "dry_run", "name"}},
	}, {
		name: "duplicated argument",
		args: json.RawMessage(`{"name":"x","count":1,"name":"y"}`),
		want: &ToolError{Code: CodeInvalidArgument, Field: "name", Message: `argument "name" is given more than once; give each argument once`},
	}, {
		name: "panic becomes INTERNAL",
		args: map[string]any{"name": "panic"},
		want: &ToolError{Code: CodeInternal, Message: "the tool failed unexpectedly; the server log has the details"},
	}, {
		// A Go error's text is the log's, not the caller's.
		name: "an error becomes INTERNAL in words",
		args: map[string]any{"name": "fail"},
		want: &ToolError{Code: CodeInternal, Message: "the tool failed on the server's side; the server's log has the details"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_test_echo", Arguments: tc.args})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !res.IsError {
				t.Fatalf("IsError = false, want an error result; content: %s", text(res))
			}
			var env struct{ Error *ToolError }
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &env); err != nil || env.Error == nil {
				t.Fatalf("structuredContent %s has no error envelope", raw)
			}
			got := env.Error
			if diff := cmp.Diff(got, tc.want, cmpopts.IgnoreUnexported(ToolError{})); diff != "" {
				t.Errorf("error envelope (-got +want):\n%s", diff)
			}
			if strings.Contains(text(res), "goroutine") {
				t.Errorf("a stack trace reached the client: %s", text(res))
			}
		})
	}

	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_test_echo", Arguments: map[string]any{"name": "kube", "count": nil}})
	if err != nil || res.IsError {
		t.Fatalf("valid call (null = absent): err=%v result=%s", err, text(res))
	}
	if got, want := structured(t, res)["greeting"], "hello kube"; got != want {
		t.Errorf("greeting = %v, want %v", got, want)
	}

	if got := len(logs.matching(`"msg"="Tool call"`)); got != len(tests)+1 {
		t.Errorf("audit lines = %d, want one per call (%d)", got, len(tests)+1)
	}
	if got := logs.matching(`"code"="INTERNAL"`); len(got) != 2 {
		t.Errorf("audit lines with code INTERNAL = %q, want two", got)
	}
	if got := logs.matching(`"cause"="dialing the echo backend: dial tcp 10.0.0.7:443: i/o timeout"`); len(got) != 1 {
		t.Errorf("the audit line of the failed call does not carry its Go error: %q", logs.matching(`"code"="INTERNAL"`))
	}
	for _, line := range logs.matching(`"msg"="Tool call"`) {
		if strings.Contains(line, "kube") || strings.Contains(line, "three") {
			t.Errorf("audit line leaks argument values: %s", line)
		}
	}
	if got := testutil.ToFloat64(s.metrics.calls.WithLabelValues("pacto_test_echo", outcomeToolError)); got != float64(len(tests)) {
		t.Errorf("tool_error count = %v, want %d", got, len(tests))
	}
	if got := testutil.ToFloat64(s.metrics.calls.WithLabelValues("pacto_test_echo", outcomeOK)); got != 1 {
		t.Errorf("ok count = %v, want 1", got)
	}
	if n, err := testutil.GatherAndCount(reg, "kubepact_mcp_tool_call_duration_seconds"); err != nil || n == 0 {
		t.Errorf("duration histogram not registered: n=%d err=%v", n, err)
	}
}

func TestUnknownToolIsProtocolErrorAndBoundedLabel(t *testing.T) {
	s := newTestServer(t, nil)
	cs := connect(t.Context(), t, s)
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("CallTool(no_such_tool) succeeded")
	}
	if got := testutil.ToFloat64(s.metrics.calls.WithLabelValues(unknownTool, outcomeProtocolError)); got != 1 {
		t.Errorf("calls{tool=%s,outcome=protocol_error} = %v, want 1", unknownTool, got)
	}
}

func TestArgShape(t *testing.T) {
	tests := []struct {
		raw  string
		want any
	}{
		{`{"name":"secret","n":3,"ok":true,"l":[1],"o":{"a":1},"z":null}`, map[string]string{"name": "string", "n": "number", "ok": "boolean", "l": "array", "o": "object", "z": "null"}},
		{``, map[string]string{}},
		{`[1]`, "array"},
		{`"x"`, "string"},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(argShape(json.RawMessage(tc.raw)), tc.want); diff != "" {
			t.Errorf("argShape(%s) (-got +want):\n%s", tc.raw, diff)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string // substring of the error; "" = valid
	}{
		{"defaults", Options{}, ""},
		{"bad transport", Options{Transport: "sse"}, "Transport"},
		{"remote without auth", Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{Listen: "0.0.0.0"}}, "AllowUnauthenticatedRemote"},
		{"remote explicitly unauthenticated", Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{Listen: "0.0.0.0", AllowUnauthenticatedRemote: true}}, ""},
		{"unknown family", Options{Families: []Family{"fleeet"}}, "unknown family"},
		{"missing token file", Options{HTTPOptions: HTTPOptions{AuthTokenFile: "/nonexistent/token"}}, "AuthTokenFile"},
		{"negative session limit", Options{HTTPOptions: HTTPOptions{MaxSessions: -1}}, "MaxSessions -1: want a positive number"},
		{"negative per-caller session quota", Options{HTTPOptions: HTTPOptions{MaxSessionsPerIdentity: -1}}, "MaxSessionsPerIdentity -1: want a positive number"},
		{"negative connection limit", Options{HTTPOptions: HTTPOptions{MaxConnections: -5}}, "MaxConnections -5: want a positive number"},
		{"negative read timeout", Options{HTTPOptions: HTTPOptions{ReadTimeout: -1}}, "ReadTimeout must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Workspace = t.TempDir()
			s, err := NewServer(t.Context(), &opts)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("NewServer: %v, want success", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("NewServer: %v, want an error containing %q", err, tc.want)
			}
			if err == nil {
				_ = s.Close()
			}
		})
	}
}
