package mcp

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// goDecoderWords are fragments of Go's JSON decoder and of the SDK's
// wrapping of it; none may reach a client.
var goDecoderWords = []string{"json:", "unmarshal", "Go struct", "Go value", "mcp.", "handling '", "malformed payload"}

func hasGoDecoderWords(msg string) bool {
	for _, w := range goDecoderWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// TestParamsInWords is the client that sends a request whose params the
// SDK cannot decode into its Go types (a tool name that is a number, an
// array for params, no params at all): over stdio and over Streamable
// HTTP in both eras it is answered Invalid params naming the parameter
// and what it must be, never with Go's decoding error, and no tool runs.
func TestParamsInWords(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	var echoCalls atomic.Int64
	tl, err := newTool(toolSpec{name: "pacto_test_echo", title: "Echo", description: "Counts its calls.", hints: hints{readOnly: true, idempotent: true}},
		func(_ context.Context, in echoArgs) (echoOut, string, error) {
			echoCalls.Add(1)
			return echoOut{Greeting: "hello " + in.Name}, "said hello", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	addTestTool(t, s, tl)
	url := serveHTTP(t, s)
	sid := rawSession(t, url)
	peer := startStdio(t, s)
	peer.initialize(t)
	for _, tc := range []struct {
		name, body, msg, id string
	}{
		{"tool name a number", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5,"arguments":{}}}`,
			`Invalid params: "params.name" must be a string; got a number`, "7"},
		{"params an array", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[]}`,
			`Invalid params: "params" must be an object of named parameters; got an array`, "7"},
		{"params a string", `{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}`,
			`Invalid params: "params" must be an object of named parameters; got a string`, "7"},
		{"cursor a number", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":5}}`,
			`Invalid params: "params.cursor" must be a string; got a number`, "7"},
		{"uri an object", `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":{}}}`,
			`Invalid params: "params.uri" must be a string; got an object`, "7"},
		{"_meta a string", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":"x"}}`,
			`Invalid params: "params._meta" must be an object; got a string`, "7"},
		{"level a boolean", `{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":true}}`,
			`Invalid params: "params.level" must be a string; got a boolean`, "7"},
		{"tools/call without params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
			`Invalid params: tools/call needs "params": an object with "name" (the tool) and "arguments"`, "7"},
		{"tools/call with null params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}`,
			`Invalid params: tools/call needs "params": an object with "name" (the tool) and "arguments"`, "7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := echoCalls.Load()
			peer.send(t, tc.body)
			id, code, msg, isErr := rpcError(t, peer.next(t))
			if !isErr || code != codeInvalidParams || msg != tc.msg || string(id) != tc.id || hasGoDecoderWords(msg) {
				t.Errorf("stdio answered id %s code %d %q; want id %s code %d %q", id, code, msg, tc.id, codeInvalidParams, tc.msg)
			}
			for _, era := range []struct{ sid, version string }{{sid, ""}, {"", statelessEra}} {
				r := rpcPost(t, url, era.sid, era.version, tc.body)
				id, code, msg, isErr := rpcError(t, r.raw)
				if r.status != http.StatusBadRequest || !isErr || code != codeInvalidParams || msg != tc.msg || string(id) != tc.id {
					t.Errorf("HTTP %q answered %d %q; want 400, id %s code %d %q", era.version, r.status, r.raw, tc.id, codeInvalidParams, tc.msg)
				}
			}
			if got := echoCalls.Load(); got != calls {
				t.Errorf("the refused request ran a tool (%d calls)", got-calls)
			}
		})
	}
	// Well-typed params and nulls (which read as absent) still reach the
	// SDK, and arguments that are not an object reach the tool, which
	// answers INVALID_ARGUMENT listing its arguments.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"ok0","method":"tools/call","params":{"name":"pacto_test_echo","arguments":["x"]}}`,
		`{"jsonrpc":"2.0","id":"ok1","method":"tools/call","params":{"name":"pacto_test_echo","arguments":{"name":"x"},"_meta":null}}`,
		`{"jsonrpc":"2.0","id":"ok2","method":"tools/list","params":{"cursor":null}}`,
		`{"jsonrpc":"2.0","id":"ok3","method":"ping"}`,
	} {
		peer.send(t, body)
		if id, _, msg, isErr := rpcError(t, peer.next(t)); isErr {
			t.Errorf("stdio: %s was refused (id %s): %q", body, id, msg)
		}
		if r := rpcPost(t, url, sid, "", body); r.status != http.StatusOK {
			t.Errorf("HTTP: %s answered %d %q", body, r.status, r.body)
		}
	}
}

// TestHTTPBodyRefusalsInWords is the HTTP client that sends a body that
// is not JSON, or one over --max-request-bytes: each is a JSON-RPC error
// that says what was wrong and what to do, as stdio answers the same
// line, not the SDK's "malformed payload: unmarshaling jsonrpc message:
// json: …" or a bare "request body exceeds N bytes".
func TestHTTPBodyRefusalsInWords(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxRequestBytes: 512}}))
	for _, version := range []string{"", statelessEra} {
		for _, body := range []string{`{not json`, `{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, ``} {
			r := rpcPost(t, url, "", version, body)
			id, code, msg, isErr := rpcError(t, r.raw)
			if r.status != http.StatusBadRequest || !isErr || code != codeParseError || msg != notOneValue || string(id) != "null" || hasGoDecoderWords(r.body) {
				t.Errorf("%q: body %q answered %d %q; want 400 and a parse error %q", version, body, r.status, r.body, notOneValue)
			}
		}
		r := rpcPost(t, url, "", version, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"`+strings.Repeat("x", 2048)+`"}}}`)
		_, code, msg, isErr := rpcError(t, r.raw)
		if r.status != http.StatusRequestEntityTooLarge || !isErr || code != codeInvalidRequest || !strings.Contains(msg, "longer than 512 bytes (the request size limit, --max-request-bytes)") {
			t.Errorf("%q: an oversized body answered %d %q; want 413 naming the limit and --max-request-bytes", version, r.status, r.body)
		}
	}
}
