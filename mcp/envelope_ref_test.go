package mcp

// The strict envelope's first implementation, kept as the oracle the fast
// scanner (envelope.go) is fuzzed against: it walks encoding/json's
// tokens, so what it calls valid JSON is what encoding/json does.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refCheckEnvelope is checkEnvelope over encoding/json's tokens: the
// same rules, the same messages, found in the same order.
func refCheckEnvelope(body []byte) (refused *envelopeError, valid bool) {
	w := refWalk{body: body, dec: json.NewDecoder(bytes.NewReader(body))}
	w.dec.UseNumber()
	if msg, ok := w.walk(); !ok {
		return nil, false
	} else if msg != "" {
		return &envelopeError{code: codeInvalidRequest, id: requestID(body), msg: "Invalid Request: " + msg}, true
	}
	for _, m := range w.msgs {
		reason := ""
		switch {
		case !m.hasID:
			continue
		case m.id == nil:
			reason = "is not a string or an integer"
		default:
			reason = idProblem(m.id)
		}
		if reason == "" {
			continue
		}
		e := &envelopeError{code: codeInvalidRequest}
		shown := "an object or array"
		if m.id != nil {
			shown = string(m.id)
		}
		if w.batch {
			e.msg = fmt.Sprintf("Invalid Request: batch element %d: id %s %s; use a string id or an integer within ±9007199254740991", m.index, shown, reason)
		} else {
			e.msg = fmt.Sprintf("Invalid Request: id %s %s; use a string id or an integer within ±9007199254740991", shown, reason)
			if m.method {
				e.id = m.id
			}
		}
		return e, true
	}
	return nil, true
}

// refFrame is one open object or array.
type refFrame struct {
	object bool
	role   role
	seen   map[string]struct{} // member names so far (objects)
	folds  map[string]string   // their case folds, to the name as written (objects)
	key    string              // the current member's name (objects)
	index  int                 // the current element's index (arrays)
	msg    *refMessage         // the message this object is (roleMessage)
}

// refMessage is what the walk keeps of one message: its id as written
// and whether it names a method (is a request or a notification).
type refMessage struct {
	index  int
	hasID  bool
	id     json.RawMessage // nil for an object or array id
	method bool
}

type refWalk struct {
	body  []byte
	dec   *json.Decoder
	stack []*refFrame
	msgs  []*refMessage
	batch bool
}

// walk returns the first rule the document breaks, "" for none, and ok
// false when it is not exactly one JSON value.
func (w *refWalk) walk() (msg string, ok bool) {
	expectKey := false // the next token is a member name or '}'
	var idOf *refMessage
	idStart := int64(0)
	started := false
	for {
		tok, err := w.dec.Token()
		if errors.Is(err, io.EOF) {
			return "", started && len(w.stack) == 0
		}
		if err != nil {
			return "", false
		}
		if started && len(w.stack) == 0 {
			return "", false // a second value after the first
		}
		started = true
		if expectKey {
			if tok == json.Delim('}') {
				w.stack = w.stack[:len(w.stack)-1]
				expectKey = w.valueEnded()
				continue
			}
			name, _ := tok.(string)
			if msg := w.member(name); msg != "" {
				return msg, true
			}
			top := w.stack[len(w.stack)-1]
			if top.role == roleMessage {
				switch name {
				case "id":
					top.msg.hasID = true
					idOf, idStart = top.msg, w.dec.InputOffset()
				case "method":
					top.msg.method = true
				}
			}
			expectKey = false
			continue
		}
		if idOf != nil {
			if _, open := tok.(json.Delim); !open {
				idOf.id = bytes.TrimLeft(w.body[idStart:w.dec.InputOffset()], " \t\r\n:")
			}
			idOf = nil
		}
		if d, open := tok.(json.Delim); open && (d == '{' || d == '[') && len(w.stack) == maxEnvelopeDepth {
			return fmt.Sprintf("objects and arrays are nested more than %d levels deep; the server reads at most %d", maxEnvelopeDepth, maxEnvelopeDepth), true
		}
		switch tok {
		case json.Delim('{'):
			f := &refFrame{object: true, role: w.childRole(), seen: map[string]struct{}{}, folds: map[string]string{}}
			if f.role == roleMessage {
				f.msg = &refMessage{}
				if w.batch {
					f.msg.index = w.stack[0].index
				}
				w.msgs = append(w.msgs, f.msg)
			}
			w.stack = append(w.stack, f)
			expectKey = true
		case json.Delim('['):
			if len(w.stack) == 0 {
				w.batch = true
			}
			w.stack = append(w.stack, &refFrame{index: 0})
		case json.Delim(']'):
			w.stack = w.stack[:len(w.stack)-1]
			expectKey = w.valueEnded()
		default: // a scalar
			expectKey = w.valueEnded()
		}
	}
}

// member checks the next member name of the innermost object and records
// it; it returns the rule it breaks, or "".
func (w *refWalk) member(name string) string {
	top := w.stack[len(w.stack)-1]
	top.key = name
	if _, dup := top.seen[name]; dup {
		return fmt.Sprintf("key %q appears twice; every key may appear once, at any depth of the request", w.path())
	}
	fold := foldKey(name)
	if first, ok := top.folds[fold]; ok {
		return fmt.Sprintf("keys %q and %q differ only in case; names are case-sensitive and a reader that ignores case would take one for the other: give each key once, spelled exactly", w.pathWith(first), w.path())
	}
	top.seen[name] = struct{}{}
	top.folds[fold] = name
	known := rpcMembers
	switch top.role {
	case roleParams, roleMeta:
		known = paramMembers
	case roleOther:
		return ""
	}
	if m, ok := known[fold]; ok && m != name {
		return fmt.Sprintf("key %q differs only in case from the member %q; JSON-RPC and MCP member names are case-sensitive: spell it %q", w.path(), m, m)
	}
	return ""
}

// childRole is the role of an object opened where the walk stands.
func (w *refWalk) childRole() role {
	switch len(w.stack) {
	case 0:
		return roleMessage
	case 1:
		if !w.stack[0].object {
			return roleMessage
		}
	}
	top := w.stack[len(w.stack)-1]
	switch {
	case top.role == roleMessage && top.key == "params":
		return roleParams
	case top.role == roleParams && top.key == "_meta":
		return roleMeta
	}
	return roleOther
}

// valueEnded moves the innermost container past one complete value and
// reports whether a member name comes next.
func (w *refWalk) valueEnded() bool {
	if len(w.stack) == 0 {
		return false
	}
	top := w.stack[len(w.stack)-1]
	if top.object {
		return true
	}
	top.index++
	return false
}

// path renders the open containers as a path: names joined by dots,
// array indexes in brackets (params.arguments.k[1].z).
func (w *refWalk) path() string {
	var b []byte
	for _, f := range w.stack {
		if f.object {
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
			continue
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(f.index), 10)
		b = append(b, ']')
	}
	return string(b)
}

// pathWith is path with the innermost member named name instead.
func (w *refWalk) pathWith(name string) string {
	top := w.stack[len(w.stack)-1]
	cur := top.key
	top.key = name
	p := w.path()
	top.key = cur
	return p
}

// FuzzEnvelopeScanner checks the strict envelope's scanner against its
// first, token-walking implementation: on any input both find the same
// rule broken (the same refusal, message and id) or the same validity.
// And what the scanner calls a plain request, the stdio transport hands
// the SDK without decoding it first: the SDK's decoder must take it as a
// request.
//
//	go test ./mcp -run '^$' -fuzz '^FuzzEnvelopeScanner$' -fuzztime 1m
func FuzzEnvelopeScanner(f *testing.F) {
	for _, tc := range envelopeCases {
		f.Add([]byte(tc.body))
	}
	for _, seed := range []string{
		``, ` `, `{}`, `[]`, `[{}]`, `[[{"a":1,"a":2}]]`, `{"a":1,"a"`, `{"a":"\u00e9","\u00c9":1}`, `{"\ud800":1,"\ufffd":2}`,
		"{\"a\xff\":1,\"a\xfe\":2}", `{"a":1e5,"b":-0.5E-3,"c":[true,false,null]}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":"\x"}`,
		`{"a":1,}`, `[1,]`, `{"id":{"x":1},"method":"m"}`, `{"jsonrpc":"2.0","id":"a\"b","method":"x","Method":"y"}`, `{} {}`, `{}x`,
		`{"params":{"_meta":{"progressToken":1,"ProgressToken":2}}}`, `[{"id":1e308,"method":"m"},{"id":2}]`, `"\t"`, "\"\x01\"",
		`{"jsonrpc":"2.0","method":"ping"}`, `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"c"},"result":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","error":{"code":1}}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"p\\u00e9\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gotValid := checkEnvelope(b)
		want, wantValid := refCheckEnvelope(b)
		if (got == nil) != (want == nil) || gotValid != wantValid {
			t.Fatalf("%q: scanner refused %+v valid %v; token walk refused %+v valid %v", b, got, gotValid, want, wantValid)
		}
		if got != nil && (got.code != want.code || got.msg != want.msg || string(got.id) != string(want.id)) {
			t.Fatalf("%q: scanner %+v (id %s); token walk %+v (id %s)", b, got, got.id, want, want.id)
		}
		if inspectEnvelope(b).plainRequest {
			msg, err := jsonrpc.DecodeMessage(b)
			if _, ok := msg.(*jsonrpc.Request); err != nil || !ok {
				t.Fatalf("%q is a plain request to the scanner; the SDK decodes %T, %v", b, msg, err)
			}
		}
	})
}
