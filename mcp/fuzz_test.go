package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/internal/authoring"
)

// FuzzDecodeArgs feeds arbitrary bytes to the argument decoders of the
// authoring tools and of a plain tool. Whatever arrives, decoding must not
// panic, and an error must be one the envelope can carry: a code and a
// message, never a Go rendering of a value; what decodes must survive a
// re-encode and decode unchanged (authoring.Metadata keeps key order).
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"name":"orders"}`,
		`{"name":"orders","interfaces":[{"name":"api","type":"openapi"}]}`,
		`{"name":"orders","interfaces":"[{\"name\":\"api\",\"type\":\"openapi\"}]"}`,
		`{"path":"a","add_interfaces":3}`, `{"path":"a","set_metadata":{"k":"v"}}`,
		`{"Name":"x"}`, `{"dryRun":true}`, `{"name":"a","name":"b"}`, `{"name":null}`,
		`{"workload":"daemon"}`, `{"count":1e400}`, `{"name":"\ud800"}`, `{"a":{"b":[[[[{}]]]]}}`,
		`{"path":"a","remove_interfaces":["a","b"],"remove_metadata":"[\"k\"]"}`,
		`{"path":"a","set_metadata":{"a":{"b":[1,2.5,true,null]}}}`, `{"path":"a","set_metadata":"{\"a\":1}"}`,
		`{"path":"a","set_metadata":{"a":{"b":1,"b":2}}}`, `{"path":"a","add_interfaces":[null]}`,
		`{"path":"a","add_dependencies":[{"ref":"oci://r/x:1"}],"remove_dependencies":["oci://r/y"]}`,
		`{"path":"a","add_config_properties":[{"name":"PORT","type":"integer","required":true}]}`,
		`{"name":"orders","interfaces":[{"name":"x","type":"asyncapi"}],"metadata":{"k":"v","n":1e3}}`,
	} {
		f.Add([]byte(seed))
	}

	createIn, err := authoringInput[authoring.CreateRequest]()
	if err != nil {
		f.Fatal(err)
	}
	editIn, err := authoringInput[authoring.EditRequest]()
	if err != nil {
		f.Fatal(err)
	}
	echoIn, err := jsonschema.For[echoArgs](nil)
	if err != nil {
		f.Fatal(err)
	}
	decoders := []struct {
		name string
		dec  *argDecoder
		dst  func() any
	}{
		{"pacto_create", mustDecoder(f, createIn), func() any { return new(authoring.CreateRequest) }},
		{"pacto_edit", mustDecoder(f, editIn), func() any { return new(authoring.EditRequest) }},
		{"echo", mustDecoder(f, echoIn), func() any { return new(echoArgs) }},
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range decoders {
			dst := d.dst()
			err := d.dec.decode(json.RawMessage(raw), dst)
			if err == nil {
				// What was handed on re-encodes to arguments that decode
				// to the same values.
				first, err := json.Marshal(dst)
				if err != nil {
					t.Fatalf("%s: re-encoding what %q decoded to: %v", d.name, raw, err)
				}
				again := d.dst()
				if err := d.dec.decode(first, again); err != nil {
					t.Fatalf("%s: %q decoded, but its re-encoding %s does not: %v", d.name, raw, first, err)
				}
				if second, _ := json.Marshal(again); string(second) != string(first) {
					t.Fatalf("%s: round trip of %q changed the values:\n%s\n%s", d.name, raw, first, second)
				}
				continue
			}
			te := asToolError(err)
			if te.Code == "" || te.Message == "" {
				t.Errorf("%s: error without code or message for %q: %#v", d.name, raw, te)
			}
			if strings.Contains(te.Message, "map[") || strings.Contains(te.Message, "validating") {
				t.Errorf("%s: %q: the message shows Go or validator text: %s", d.name, raw, te.Message)
			}
			if te.Code == CodeInternal {
				t.Errorf("%s: decoding %q is an INTERNAL error: %v", d.name, raw, te)
			}
			if res := errorResult(err); !res.IsError {
				t.Errorf("%s: errorResult is not an error result", d.name)
			}
		}
	})
}

func mustDecoder(f *testing.F, s *jsonschema.Schema) *argDecoder {
	f.Helper()
	d, err := newArgDecoder(s)
	if err != nil {
		f.Fatal(err)
	}
	return d
}

// FuzzStdioEnvelope feeds arbitrary bytes, as one or more lines, to a
// session of the real stdio transport (the filter and the SDK's own
// transport behind it), between an initialize and a sentinel ping.
// Whatever arrives: the session survives (the sentinel is answered),
// every line the server writes is one JSON-RPC 2.0 message, and a line
// the strict envelope refuses, or that is not JSON, is answered with
// exactly that refusal, never reaches a tool (a probe tool counts its
// calls), and is answered the same over Streamable HTTP.
//
//	go test ./mcp -run '^$' -fuzz '^FuzzStdioEnvelope$' -fuzztime 5m -parallel 1
func FuzzStdioEnvelope(f *testing.F) {
	for _, tc := range envelopeCases {
		f.Add([]byte(tc.body))
	}
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pacto_test_echo","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pacto_test_echo","arguments":{"name":"x","Name":"y"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pacto_test_echo","name":"pacto_test_echo","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"Name":"pacto_test_echo","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":9,"METHOD":"tools/call","params":{"name":"pacto_test_echo","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":"\u0039","method":"ping"}`, `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `[]`, `[1]`,
		`{}`, `null`, `"x"`, `{"jsonrpc":"2.0"`, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"a\":1,\"a\":2}",
		"\xff\xfe", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"\u212a":1,"k":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat(`{"b":`, 1001) + `1` + strings.Repeat(`}`, 1001) + `}}`,
	} {
		f.Add([]byte(seed))
	}
	var probe atomic.Int64
	s := newTestServer(f, &Options{Transport: TransportHTTP})
	tl, err := newTool(toolSpec{name: "pacto_test_echo", title: "Echo", description: "Counts its calls.", hints: hints{readOnly: true, idempotent: true}},
		func(_ context.Context, in echoArgs) (echoOut, string, error) {
			probe.Add(1)
			return echoOut{Greeting: "hello " + in.Name}, "said hello", nil
		})
	if err != nil {
		f.Fatal(err)
	}
	addTestTool(f, s, tl)
	url := serveHTTP(f, s)

	f.Fuzz(func(t *testing.T, input []byte) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- s.serveStdio(t.Context(), inR, outW)
			_ = outW.Close()
		}()
		lines := make(chan string, 64)
		go readLines(outR, lines)
		next := func(what string) string {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the session ended %s, after input %q", what, input)
				}
				return l
			case <-time.After(10 * time.Second):
				t.Fatalf("no line %s, after input %q", what, input)
			}
			return ""
		}
		write := func(b []byte) {
			if _, err := inW.Write(b); err != nil {
				t.Fatalf("writing: %v", err)
			}
		}
		write([]byte(initializeBody + "\n"))
		if _, _, _, isErr := rpcError(t, next("after initialize")); isErr {
			t.Fatal("initialize failed")
		}
		write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))

		calls := probe.Load()
		write(append(bytes.Clone(input), '\n'))
		const sentinel = `"kubepact-fuzz-sentinel"`
		write([]byte(`{"jsonrpc":"2.0","id":` + sentinel + `,"method":"ping"}` + "\n"))
		var answers []string
		for {
			l := next("before the sentinel was answered")
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("the server wrote %q, not a JSON-RPC 2.0 message, after input %q", l, input)
			}
			if string(m.ID) == sentinel {
				break
			}
			answers = append(answers, l)
		}
		_ = inW.Close()
		for range lines {
		}
		if err := <-done; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			t.Fatalf("the session ended with %v, after input %q", err, input)
		}

		if bytes.ContainsAny(input, "\n") || len(bytes.TrimSpace(input)) == 0 {
			return
		}
		line := bytes.TrimSuffix(input, []byte("\r"))
		refused, valid := checkEnvelope(line)
		var want string
		switch {
		case refused != nil:
			want = string(errorMessage(refused.id, refused.code, refused.msg))
		case !valid:
			want = string(errorMessage(nil, codeParseError, "Parse error: the line is not one JSON value; send each JSON-RPC message as JSON on a line of its own"))
		default:
			return
		}
		if !slices.Contains(answers, strings.TrimSuffix(want, "\n")) {
			t.Fatalf("input %q: answers %q lack the refusal %q", input, answers, want)
		}
		if got := probe.Load(); got != calls {
			t.Fatalf("input %q was refused, yet a tool ran", input)
		}
		if refused == nil {
			return
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || string(body) != want {
			t.Fatalf("input %q: stdio refused it with %q, HTTP answered %d %q", input, want, resp.StatusCode, body)
		}
	})
}
