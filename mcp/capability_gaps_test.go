package mcp

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// errorOf returns the error envelope of a tool error result.
func errorOf(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	e, _ := structured(t, res)["error"].(map[string]any)
	if !res.IsError || e == nil {
		t.Fatalf("want a tool error, got isError=%v %s", res.IsError, text(res))
	}
	return e
}

func listedTools(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return names
}

// A call to an operation the exposure policy withheld is a tool error that
// says why and what would expose it; tools/list still leaves it out.
func TestWithheldToolCallIsAToolError(t *testing.T) {
	base := demoService(t, nil)
	for _, tc := range []struct {
		name   string
		copts  *openapitools.Options
		opts   *Options
		tool   string
		reason string
		remedy string
		// why is the capability's reason as the agent reads it: the
		// option field it names, as this server's flag.
		why string
	}{
		{name: "writes not allowed", copts: &openapitools.Options{BaseURL: base}, tool: "createProduct",
			reason: openapitools.WithheldWritesNotAllowed, remedy: "--allow-writes", why: "POST is not a read-only method; --allow-writes exposes it"},
		{name: "denied", copts: &openapitools.Options{BaseURL: base, DenyOperations: []string{"getProduct"}}, tool: "getProduct",
			reason: openapitools.WithheldDenied, remedy: "--deny-operations", why: "named in --deny-operations"},
		{name: "not allowed", copts: &openapitools.Options{BaseURL: base, AllowOperations: []string{"getHealth"}}, tool: "listProducts",
			reason: openapitools.WithheldNotAllowed, remedy: "--allow-operations", why: "not named in --allow-operations"},
		{name: "read-only server", copts: &openapitools.Options{BaseURL: base, AllowWrites: true}, opts: &Options{ReadOnly: true}, tool: "createProduct",
			reason: withheldReadOnly, remedy: "--read-only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := capabilityServer(t, "../examples/bundles/catalog", tc.copts, tc.opts)
			cs := connect(t.Context(), t, s)
			if slices.Contains(listedTools(t, cs), tc.tool) {
				t.Fatalf("tools/list shows the withheld %s", tc.tool)
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("a withheld tool answers a protocol error: %v", err)
			}
			e := errorOf(t, res)
			if e["code"] != CodeToolWithheld || e["reason"] != tc.reason || !strings.Contains(e["remedy"].(string), tc.remedy) {
				t.Errorf("error %v", e)
			}
			if !strings.Contains(text(res), tc.tool) || !strings.Contains(text(res), tc.remedy) {
				t.Errorf("text does not name the tool and the remedy: %s", text(res))
			}
			if !strings.Contains(text(res), tc.why) {
				t.Errorf("text does not give the reason %q: %s", tc.why, text(res))
			}
			for _, field := range []string{"AllowWrites", "AllowOperations", "DenyOperations"} {
				if strings.Contains(text(res), field) {
					t.Errorf("an option field (%s) reaches the agent instead of the flag: %s", field, text(res))
				}
			}
			if tc.why == "" {
				return
			}
			// pacto_withheld gives the same reason in the same words.
			var list struct{ Withheld []openapitools.Withheld }
			raw, _ := json.Marshal(structured(t, callTool(t, cs, "pacto_withheld", map[string]any{})))
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatal(err)
			}
			for _, w := range list.Withheld {
				if w.Name == tc.tool && w.Reason != tc.why {
					t.Errorf("pacto_withheld gives %s the reason %q, want %q", w.Name, w.Reason, tc.why)
				}
			}
		})
	}

	// A name that is no operation at all stays a protocol error.
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base}, nil)
	cs := connect(t.Context(), t, s)
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "noSuchTool", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool is not a protocol error")
	}
}

const cookiesAndParts = `openapi: 3.0.3
info: {title: probe, version: "1"}
servers: [{url: "http://127.0.0.1:1"}]
paths:
  /cookies:
    get:
      operationId: cookies
      parameters:
        - {name: q, in: query, schema: {type: string}}
        - {name: tags, in: cookie, schema: {type: array, items: {type: string}}}
        - {name: pair, in: cookie, schema: {type: object, properties: {a: {type: string}, b: {type: integer}}}}
        - {name: flat, in: cookie, explode: false, schema: {type: object, properties: {a: {type: string}, b: {type: integer}}}}
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                name: {type: string}
                meta: {type: object, properties: {size: {type: integer}, labels: {type: array, items: {type: string}}}}
                ids: {type: array, items: {type: integer}}
                notes: {type: array, items: {type: object, properties: {text: {type: string}}}}
`

// seen is what the echo service received.
type seen struct {
	Cookie string              `json:"cookie"`
	Query  string              `json:"query"`
	Parts  []map[string]string `json:"parts"` // name, contentType, value
}

func partsEcho(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := seen{Cookie: r.Header.Get("Cookie"), Query: r.URL.RawQuery, Parts: []map[string]string{}}
		if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
			mr := multipart.NewReader(r.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				v, _ := io.ReadAll(p)
				out.Parts = append(out.Parts, map[string]string{"name": p.FormName(), "contentType": p.Header.Get("Content-Type"), "value": string(v)})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func seenOf(t *testing.T, res *sdk.CallToolResult) seen {
	t.Helper()
	got := structured(t, res)
	if res.IsError || got["status"] != float64(200) {
		t.Fatalf("call failed: %s", text(res))
	}
	raw, _ := json.Marshal(got["body"])
	var s seen
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("body %s: %v", raw, err)
	}
	return s
}

// Cookie parameters with array and object schemas are sent in the form
// style (explode by default), and a tool with such a cookie works when it
// is not sent at all.
func TestCookieArraysAndObjects(t *testing.T) {
	dir := writeBundle(t, cookiesAndParts, nil)
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: partsEcho(t), AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	for _, tc := range []struct {
		args       map[string]any
		cookie, qs string
	}{
		{args: map[string]any{"q": "x"}, qs: "q=x"},
		{args: map[string]any{"tags": []string{"a", "b c"}}, cookie: "tags=a; tags=b%20c"},
		{args: map[string]any{"pair": map[string]any{"b": 2, "a": "x"}}, cookie: "a=x; b=2"},
		{args: map[string]any{"flat": map[string]any{"a": "x", "b": 2}}, cookie: "flat=a,x,b,2"},
	} {
		got := seenOf(t, callTool(t, cs, "cookies", tc.args))
		if got.Cookie != tc.cookie || got.Query != tc.qs {
			t.Errorf("%v: cookie %q query %q, want %q %q", tc.args, got.Cookie, got.Query, tc.cookie, tc.qs)
		}
	}
	// The value is still checked against its schema before anything is sent.
	if e := errorOf(t, callTool(t, cs, "cookies", map[string]any{"pair": map[string]any{"b": "two"}})); e["code"] != CodeInvalidArgument || e["field"] != "pair.b" {
		t.Errorf("a mistyped cookie object: %v", e)
	}
}

// Object fields of a multipart body are sent as JSON parts.
func TestMultipartObjectFields(t *testing.T) {
	dir := writeBundle(t, cookiesAndParts, nil)
	s := capabilityServer(t, dir, &openapitools.Options{BaseURL: partsEcho(t), AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	got := seenOf(t, callTool(t, cs, "upload", map[string]any{"body": map[string]any{
		"name":  "n1",
		"meta":  map[string]any{"size": 3, "labels": []string{"x"}},
		"ids":   []int{1, 2},
		"notes": []any{map[string]any{"text": "a"}, map[string]any{"text": "b"}},
	}}))
	want := []map[string]string{
		{"name": "ids", "contentType": "", "value": "1"},
		{"name": "ids", "contentType": "", "value": "2"},
		{"name": "meta", "contentType": "application/json", "value": `{"labels":["x"],"size":3}`},
		{"name": "name", "contentType": "", "value": "n1"},
		{"name": "notes", "contentType": "application/json", "value": `{"text":"a"}`},
		{"name": "notes", "contentType": "application/json", "value": `{"text":"b"}`},
	}
	if diff := cmp.Diff(got.Parts, want); diff != "" {
		t.Errorf("parts (-got +want):\n%s", diff)
	}
}

// pacto_skill's schema gives an example the served bundle has, and none
// when it has no skills.
func TestSkillExampleNamesTheBundlesOwnSkill(t *testing.T) {
	skillDoc := func(s *Server) string {
		raw, err := json.Marshal(s.tools["pacto_skill"].input)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	withSkills := capabilityServer(t, writeBundle(t, cookiesAndParts, map[string]string{"restock-a-product": "# Restock"}), nil, nil)
	if doc := skillDoc(withSkills); !strings.Contains(doc, "e.g. restock-a-product") {
		t.Errorf("pacto_skill's schema names no skill of the bundle: %s", doc)
	}
	none := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: "http://127.0.0.1:1"}, nil)
	doc := skillDoc(none)
	if strings.Contains(doc, "e.g.") || !strings.Contains(doc, "no skills") {
		t.Errorf("pacto_skill's schema on a bundle without skills: %s", doc)
	}
	cs := connect(t.Context(), t, withSkills)
	e := errorOf(t, callTool(t, cs, "pacto_skill", map[string]any{"name": "restock"}))
	if e["code"] != "NOT_FOUND" || e["didYouMean"] != "restock-a-product" || e["accepted"] != nil {
		t.Errorf("unknown skill: %v", e)
	}
	e = errorOf(t, callTool(t, cs, "pacto_skill", map[string]any{"name": "../x"}))
	if msg := e["message"].(string); e["code"] != CodeInvalidArgument || strings.Contains(msg, "refund-a-payment") || !strings.Contains(msg, "restock-a-product") {
		t.Errorf("bad skill name: %v", e)
	}
}

// A generated tool's refused arguments are explained by the server: every
// fault at once, in words written for the agent (never the validator's
// text), with did-you-mean and the path into a structured body.
func TestGeneratedToolArgumentMessages(t *testing.T) {
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: demoService(t, nil), AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	diagsOf := func(res *sdk.CallToolResult) []invoke.Diagnostic {
		t.Helper()
		errorOf(t, res)
		var out struct{ Diagnostics []invoke.Diagnostic }
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		for _, d := range out.Diagnostics {
			if strings.Contains(d.Message, "validating") || strings.Contains(d.Message, "map[") || strings.Contains(d.Message, "/1 ") {
				t.Errorf("library or Go text reaches the agent: %s", d.Message)
			}
		}
		return out.Diagnostics
	}
	res := callTool(t, cs, "listProducts", map[string]any{"limit": 500, "tagg": []string{"x"}})
	got := diagsOf(res)
	want := []invoke.Diagnostic{
		{Field: "tagg", Code: invoke.DiagUnknown, Expected: "one of: X-Request-ID, cursor, limit, tag", Message: `unknown argument "tagg" (did you mean "tag"?)`, DidYouMean: "tag"},
		{Field: "limit", Code: invoke.DiagInvalidValue, Expected: "an integer from 1 to 100", Message: `"limit" must be at most 100; got 500`},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
	if e := errorOf(t, res); e["didYouMean"] != "tag" || !strings.Contains(text(res), "Accepted arguments: X-Request-ID, cursor, limit, tag.") {
		t.Errorf("envelope %v; text %s", e, text(res))
	}

	got = diagsOf(callTool(t, cs, "createProduct", map[string]any{"body": map[string]any{"sku": "K-1", "name": "Kettle", "price": map[string]any{"currency": "eur", "amountMinor": 5}}}))
	if len(got) != 1 || got[0].Field != "body.price.currency" || got[0].Message != `"body.price.currency" must match the pattern ^[A-Z]{3}$; got the string "eur"` {
		t.Errorf("pattern in a $ref'd object: %+v", got)
	}
	got = diagsOf(callTool(t, cs, "createProduct", map[string]any{"body": map[string]any{"sku": "K-1", "name": "Kettle"}}))
	if len(got) != 1 || got[0].Field != "body.price" || !strings.Contains(got[0].Message, `"body" needs the field "price". Example: {"name":"...","price":{"amountMinor":1,"currency":"..."},"sku":"..."}`) {
		t.Errorf("missing field: %+v", got)
	}
}
