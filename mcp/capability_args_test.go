package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// specBundle writes a bundle with one openapi interface per spec, each a
// file of internal/openapitools/testdata: iface[i] names the interface of
// files[i]. With several interfaces every tool name is prefixed
// "<interface>_".
func specBundle(t *testing.T, ifaces, files []string) string {
	t.Helper()
	dir := t.TempDir()
	var manifest strings.Builder
	manifest.WriteString("pactoVersion: \"2.0\"\nservice: {name: probe, version: 1.0.0}\ninterfaces:\n")
	for i, file := range files {
		data, err := os.ReadFile(filepath.Join("..", "internal", "openapitools", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&manifest, "  - {name: %s, type: openapi, ref: %s}\n", ifaces[i], file)
	}
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(manifest.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// countingService answers every request with 200 and an empty JSON
// object, and counts the requests.
func countingService(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// refusal is a refused generated tool call as the agent receives it.
type refusal struct {
	Error       *ToolError          `json:"error"`
	Diagnostics []invoke.Diagnostic `json:"diagnostics"`
	text        string
}

func refusalOf(t *testing.T, res *sdk.CallToolResult) refusal {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a refused call, got %s", text(res))
	}
	var r refusal
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &r); err != nil || r.Error == nil {
		t.Fatalf("structuredContent %s is no refusal: %v", raw, err)
	}
	r.text = text(res)
	for _, d := range r.Diagnostics {
		for _, raw := range []string{"validating", "map[", "/1 ", "doesn't match", "has an error", "value is required"} {
			if strings.Contains(d.Message, raw) {
				t.Errorf("library or Go text %q reaches the agent: %s", raw, d.Message)
			}
		}
	}
	return r
}

// TestGeneratedToolDiagnostics: a generated tool's arguments are checked by
// the server, every fault at once, and what only the request shows (a
// header value with a line break) is refused by invoke.Call; the agent
// reads one diagnostic per fault and nothing is sent.
func TestGeneratedToolDiagnostics(t *testing.T) {
	base, calls := countingService(t)
	dir := specBundle(t, []string{"styles"}, []string{"styles.yaml"})
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: base + "/base", AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	for _, tc := range []struct {
		name, tool string
		args       any
		want       []invoke.Diagnostic
		text       string
	}{
		{name: "not an object", tool: "search", args: json.RawMessage(`[1]`),
			want: []invoke.Diagnostic{{Code: invoke.DiagNotAnObject, Expected: "a JSON object of named arguments",
				Message: "the arguments must be one JSON object of named arguments; got an array of 1 item(s)"}},
			text: "Accepted arguments: X-Obj, X-Trace, filter, flat, ids, json, point, pp, prefs, q, raw, session, sp, tags."},
		{name: "unknown and missing", tool: "echoJSON", args: map[string]any{"bogus": 1},
			want: []invoke.Diagnostic{
				{Field: "bogus", Code: invoke.DiagUnknown, Expected: "one of: body", Message: `unknown argument "bogus"`},
				{Field: "body", Code: invoke.DiagRequired, Expected: "a JSON object {n, big?, note?}",
					Message: `argument "body" is required. Example: {"n":1}`},
			},
			text: `echoJSON was not called: unknown argument "bogus"; argument "body" is required. Example: {"n":1}. Nothing was sent to the service. Accepted arguments: body.`},
		{name: "wrong type", tool: "simpleArrayObject", args: map[string]any{"ids": "1,2", "obj": map[string]any{}},
			want: []invoke.Diagnostic{{Field: "ids", Code: invoke.DiagInvalidValue, Expected: "a JSON array of integers",
				Message: `"ids" must be a JSON array of integers; got the string "1,2". Example: [1]`}}},
		{name: "schema violation in body", tool: "echoJSON", args: map[string]any{"body": map[string]any{"n": 0}},
			want: []invoke.Diagnostic{{Field: "body.n", Code: invoke.DiagInvalidValue, Expected: "an integer of at least 1",
				Message: `"body.n" must be at least 1; got 0`}}},
		{name: "duplicated argument", tool: "simplePath", args: json.RawMessage(`{"id":"a","id":"b"}`),
			want: []invoke.Diagnostic{{Field: "id", Code: invoke.DiagDuplicate, Expected: "each argument once",
				Message: `argument "id" is given more than once; give each argument once`}}},
		{name: "duplicated argument, once escaped", tool: "simplePath", args: json.RawMessage(`{"id":"a,}\"{","\u0069d":["b",{"c":1}]}`),
			want: []invoke.Diagnostic{{Field: "id", Code: invoke.DiagDuplicate, Expected: "each argument once",
				Message: `argument "id" is given more than once; give each argument once`}}},
		{name: "header injection", tool: "search", args: map[string]any{"X-Trace": []string{"a\r\nX-Evil: 1"}},
			want: []invoke.Diagnostic{{Field: "X-Trace", Code: invoke.DiagInvalidValue, Expected: "a value without line breaks",
				Message: `"X-Trace" is sent as a header, and a header value cannot contain CR, LF or NUL`}}},
		{name: "path value making a dot segment", tool: "simplePath", args: map[string]any{"id": ".."},
			want: []invoke.Diagnostic{{Field: "id", Code: invoke.DiagInvalidValue, Expected: "a string",
				Message: `"id" would make the path segment "..", which reaches another path than the operation's`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := refusalOf(t, callTool(t, cs, tc.tool, tc.args))
			if r.Error.Code != CodeInvalidArgument {
				t.Errorf("error code %s, want %s", r.Error.Code, CodeInvalidArgument)
			}
			if diff := cmp.Diff(r.Diagnostics, tc.want); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
			if !strings.Contains(r.text, tc.want[0].Message) || (tc.text != "" && !strings.Contains(r.text, tc.text)) {
				t.Errorf("text %q; want it to hold %q and %q", r.text, tc.want[0].Message, tc.text)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the service was called %d times; refused arguments must send nothing", n)
	}
}

// TestSwaggerAndOpenAPI31Arguments: a Swagger 2.0 maximum, OpenAPI 3.1's
// const and numeric exclusiveMinimum, and a required field deep in a
// recursive body are refused by the server before anything is sent.
func TestSwaggerAndOpenAPI31Arguments(t *testing.T) {
	base, calls := countingService(t)
	dir := specBundle(t, []string{"legacy", "tree"}, []string{"swagger2.json", "circular31.yaml"})
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: base, AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []invoke.Diagnostic
	}{
		{tool: "legacy_listPets", args: map[string]any{"limit": 51},
			want: []invoke.Diagnostic{{Field: "limit", Code: invoke.DiagInvalidValue, Expected: "an integer of at most 50",
				Message: `"limit" must be at most 50; got 51`}}},
		{tool: "tree_getThing", args: map[string]any{"id": "abd", "n": 0},
			want: []invoke.Diagnostic{
				{Field: "id", Code: invoke.DiagInvalidValue, Expected: `exactly "abc"`, Message: `"id" must be "abc"; got the string "abd"`},
				{Field: "n", Code: invoke.DiagInvalidValue, Expected: "an integer greater than 0", Message: `"n" must be greater than 0; got 0`},
			}},
		{tool: "tree_createNode", args: map[string]any{"body": map[string]any{"name": "root", "children": []any{map[string]any{"name": "leaf", "children": []any{map[string]any{}}}}}},
			want: []invoke.Diagnostic{{Field: "body.children[0].children[0].name", Code: invoke.DiagInvalidValue, Expected: "a string",
				Message: `"body.children[0].children[0]" needs the field "name". Example: {"name":"..."}`}}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := refusalOf(t, callTool(t, cs, tc.tool, tc.args))
			if diff := cmp.Diff(r.Diagnostics, tc.want); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the service was called %d times; refused arguments must send nothing", n)
	}
	// The same tools with right arguments are sent.
	for tool, args := range map[string]map[string]any{
		"legacy_listPets": {"limit": 50},
		"tree_getThing":   {"id": "abc", "n": 1},
		"tree_createNode": {"body": map[string]any{"name": "root", "children": []any{map[string]any{"name": "leaf"}}}},
	} {
		if res := callTool(t, cs, tool, args); res.IsError {
			t.Errorf("%s %v: %s", tool, args, text(res))
		}
	}
}

// TestOpenAPI31ConstructsArguments: what OpenAPI 3.1's schema forms accept
// and refuse — $ref with siblings, const, prefixItems,
// unevaluatedProperties, $defs inside a component, $anchor, boolean
// schemas — is what the server accepts and refuses, and a refusal names
// the argument (or the path into it) at fault.
func TestOpenAPI31ConstructsArguments(t *testing.T) {
	base, _ := countingService(t)
	dir := specBundle(t, []string{"a"}, []string{"constructs31.yaml"})
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: base, AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	for _, tc := range []struct {
		tool, args string
		field      string // the first diagnostic's field; "" when the arguments are right
		message    string // the first diagnostic's message
	}{
		{"refSiblings", `{"body": {"name": "x"}}`, "", ""},
		{"refSiblings", `{"body": {"tag": "x"}}`, "body.name", `"body" needs the field "name"`},
		{"constParam", `{"kind": "widget"}`, "", ""},
		{"constParam", `{"kind": "gadget"}`, "kind", `"kind" must be "widget"; got the string "gadget"`},
		{"tuple", `{"body": ["a", 1]}`, "", ""},
		{"tuple", `{"body": ["a", "b"]}`, "body[1]", `"body[1]" must be an integer; got the string "b"`},
		{"tuple", `{"body": ["a", 1, 2]}`, "body[2]", `"body[2]" is not allowed: its schema accepts no value there`},
		{"closed", `{"body": {"name": "x", "extra": true}}`, "", ""},
		{"closed", `{"body": {"name": "x", "other": 1}}`, "body.other", `"body" has no field "other"; its fields are extra, name, tag`},
		{"nestedDefs", `{"body": {"point": {"x": 1, "y": 2}, "line": [{"x": 0, "y": 0}]}}`, "", ""},
		{"nestedDefs", `{"body": {"line": [{"x": 0}]}}`, "body.line[0].y", `"body.line[0]" needs the field "y". Example: {"x":1,"y":1}`},
		{"anchor", `{"body": {"item": "a"}}`, "", ""},
		{"anchor", `{"body": {"item": ""}}`, "body.item", `"body.item" must be at least 1 character(s) long; got the string "", 0 character(s)`},
		{"booleans", `{"anything": "x", "filter": {"a": 1}}`, "", ""},
		{"booleans", `{"filter": {"b": 1}}`, "filter.b", `"filter.b" is not allowed: its schema accepts no value there`},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			res := callTool(t, cs, tc.tool, json.RawMessage(tc.args))
			if tc.field == "" {
				if res.IsError {
					t.Errorf("refused: %s", text(res))
				}
				return
			}
			r := refusalOf(t, res)
			if len(r.Diagnostics) == 0 || r.Diagnostics[0].Field != tc.field || r.Diagnostics[0].Message != tc.message {
				t.Errorf("diagnostics %+v; want the first on %s: %s", r.Diagnostics, tc.field, tc.message)
			}
		})
	}
}

// kinFormats: string formats that kin-openapi's request validator checks
// on the wire (date, date-time) while the argument schemas leave format
// as an annotation, so the server's own check passes and the request
// validator refuses.
const kinFormats = `openapi: 3.0.3
info: {title: formats, version: "1"}
paths:
  /events:
    post:
      operationId: postEvent
      parameters:
        - {name: since, in: query, schema: {type: string, format: date-time}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                day: {type: string, format: date}
                items: {type: array, items: {type: object, properties: {at: {type: string, format: date-time}}}}
      responses: {'200': {description: ok}}
`

// TestRequestValidatorSpeaksOurWords: what kin-openapi's request validator
// refuses after the server's own check passed reaches the agent as our
// diagnostic — the argument (or the path into the body) and the rule it
// breaks as sent — never the validator's text, and nothing is sent.
func TestRequestValidatorSpeaksOurWords(t *testing.T) {
	base, calls := countingService(t)
	dir := writeBundle(t, kinFormats, nil)
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: base, AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	r := refusalOf(t, callTool(t, cs, "postEvent", map[string]any{
		"since": "yesterday",
		"body":  map[string]any{"day": "1st of May", "items": []any{map[string]any{"at": "2026-01-01T00:00:00Z"}, map[string]any{"at": "noon"}}},
	}))
	want := []invoke.Diagnostic{
		{Field: "since", Code: invoke.DiagRequestInvalid, Expected: "a string",
			Message: `"since" as it would be sent (a query parameter) does not satisfy the operation's OpenAPI definition: it must have the format "date-time"`},
		{Field: "body.day", Code: invoke.DiagRequestInvalid, Expected: "a JSON object {day?, items?}",
			Message: `"body.day" as it would be sent (the request body) does not satisfy the operation's OpenAPI definition: it must have the format "date"`},
		{Field: "body.items[1].at", Code: invoke.DiagRequestInvalid, Expected: "a JSON object {day?, items?}",
			Message: `"body.items[1].at" as it would be sent (the request body) does not satisfy the operation's OpenAPI definition: it must have the format "date-time"`},
	}
	if diff := cmp.Diff(r.Diagnostics, want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
	for _, raw := range []string{"doesn't match", "regular expression", "has an error", "in query", "yesterday"} {
		if strings.Contains(r.text, raw) {
			t.Errorf("the validator's wording %q reaches the agent: %s", raw, r.text)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the service was called %d times; a refused request must send nothing", n)
	}
	if res := callTool(t, cs, "postEvent", map[string]any{"since": "2026-01-01T00:00:00Z", "body": map[string]any{"day": "2026-05-01"}}); res.IsError {
		t.Errorf("right formats refused: %s", text(res))
	}
}
