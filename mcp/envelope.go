package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON-RPC error codes kubepact's transports answer themselves, before
// the SDK sees a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	// codeUnavailable is in the implementation-defined server error range:
	// the server is draining, or every session slot is busy.
	codeUnavailable = -32000
)

// maxExactID is the largest integer id the SDK echoes exactly: it decodes
// ids through float64, so beyond 2^53-1 digits are lost, and a fraction or
// an exponent comes back as a different number (1e308 as
// -9223372036854775808).
const maxExactID = 1<<53 - 1

// maxEnvelopeDepth is the deepest nesting of objects and arrays the SDK
// decodes; a message nested deeper is refused before it.
const maxEnvelopeDepth = 1000

var canonicalInt = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// The member names the strict envelope knows. JSON-RPC and MCP names are
// case-sensitive, and the SDK matches them exactly; a reader that matches
// them regardless of case (Go's encoding/json into a struct, as many
// proxies and approval layers do) would take "Method" for "method". So a
// key that differs only in case from one of these, where it is a member,
// is refused: a JSON-RPC member in a message object (the request, or each
// element of a batch), an MCP parameter in its params object or in
// params._meta.
var (
	rpcMembers   = memberFolds("jsonrpc", "id", "method", "params", "result", "error")
	paramMembers = memberFolds("_meta", "name", "arguments", "cursor", "uri", "protocolVersion", "capabilities", "clientInfo",
		"level", "ref", "argument", "context", "progressToken", "progress", "total", "message", "requestId", "reason", "task")
)

func memberFolds(names ...string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[foldKey(n)] = n
	}
	return m
}

// envelopeError is a message refused before the SDK decoded it.
type envelopeError struct {
	code int
	id   json.RawMessage // the request's id exactly as sent; nil when unknown
	msg  string
}

// checkEnvelope is the strict envelope, the one check every transport
// applies to a message (an HTTP body, a stdio line) before the SDK
// decodes it:
//
//   - no key twice in any object at any depth: a proxy or an approval
//     layer reading the first value would see another call than the one
//     run;
//   - no two keys in one object, at any depth, that differ only in case
//     ("amount" beside "Amount"): a reader that ignores case, such as a
//     Go service decoding the body kubepact forwards, would read another
//     value than the one checked;
//   - no key that differs only in case from a JSON-RPC member of a
//     message, or from an MCP parameter of its params (rpcMembers,
//     paramMembers): the SDK ignores "Method", a case-blind reader takes
//     it for the method;
//   - every id one the SDK echoes exactly: a string, or an integer
//     within ±(2^53-1) written plainly;
//   - objects and arrays nested at most maxEnvelopeDepth deep, as deep as
//     the SDK decodes.
//
// valid is false when the message is not one JSON value: checkEnvelope
// does not refuse that (whoever decodes it answers a parse error). It
// walks tokens with an explicit stack, so nesting depth costs heap, never
// goroutine stack.
func checkEnvelope(body []byte) (refused *envelopeError, valid bool) {
	w := envelopeWalk{body: body, dec: json.NewDecoder(bytes.NewReader(body))}
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

// role is what an object of a message is, for the member-name rule.
type role int

const (
	roleOther   role = iota
	roleMessage      // a JSON-RPC message: the body, or an element of a batch
	roleParams       // a message's params
	roleMeta         // its params._meta
)

// envFrame is one open object or array.
type envFrame struct {
	object bool
	role   role
	seen   map[string]struct{} // member names so far (objects)
	folds  map[string]string   // their case folds, to the name as written (objects)
	key    string              // the current member's name (objects)
	index  int                 // the current element's index (arrays)
	msg    *envMessage         // the message this object is (roleMessage)
}

// envMessage is what the walk keeps of one message: its id as written
// and whether it names a method (is a request or a notification).
type envMessage struct {
	index  int
	hasID  bool
	id     json.RawMessage // nil for an object or array id
	method bool
}

type envelopeWalk struct {
	body  []byte
	dec   *json.Decoder
	stack []*envFrame
	msgs  []*envMessage
	batch bool
}

// walk returns the first rule the document breaks, "" for none, and ok
// false when it is not exactly one JSON value.
func (w *envelopeWalk) walk() (msg string, ok bool) {
	expectKey := false // the next token is a member name or '}'
	var idOf *envMessage
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
			f := &envFrame{object: true, role: w.childRole(), seen: map[string]struct{}{}, folds: map[string]string{}}
			if f.role == roleMessage {
				f.msg = &envMessage{}
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
			w.stack = append(w.stack, &envFrame{index: 0})
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
func (w *envelopeWalk) member(name string) string {
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
func (w *envelopeWalk) childRole() role {
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
func (w *envelopeWalk) valueEnded() bool {
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
func (w *envelopeWalk) path() string {
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
func (w *envelopeWalk) pathWith(name string) string {
	top := w.stack[len(w.stack)-1]
	cur := top.key
	top.key = name
	p := w.path()
	top.key = cur
	return p
}

// foldKey maps a name to one representative of its case-folding class
// (strings.EqualFold's): two names differ only in case exactly when their
// folds are equal. A lower-case ASCII name is its own fold, so the common
// case allocates nothing.
func foldKey(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is the least rune of r's case orbit, with an ASCII letter's
// orbit (k, K and the Kelvin sign) mapped to its lower-case letter.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if 'A' <= least && least <= 'Z' {
		return least + 'a' - 'A'
	}
	return least
}

// idProblem says why a JSON-RPC id cannot be answered exactly, or "".
func idProblem(id json.RawMessage) string {
	switch id[0] {
	case '"', 'n': // a string, or null (a notification in old drafts)
		return ""
	case '{', '[', 't', 'f':
		return "is not a string or an integer"
	}
	s := string(id)
	if !canonicalInt.MatchString(s) {
		return "is not written as a plain integer (no fraction, no exponent)"
	}
	if n, err := strconv.ParseInt(s, 10, 64); err != nil || n > maxExactID || n < -maxExactID {
		return "is too large to be echoed exactly"
	}
	return ""
}

// requestID returns the id of a refused single request, to answer it
// with: the value of its one member named exactly "id", when it is one
// the SDK would echo exactly, no other member's name folds to "id", and
// a member named exactly "method" makes it a request (a refused response
// is answered with a null id: its id is the other side's). Nil otherwise.
func requestID(body []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	ids, method := 0, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		switch {
		case name == "method":
			method = true
		case foldKey(name) == "id":
			ids++
			if name == "id" {
				id = v
			}
		}
	}
	if ids != 1 || id == nil || !method || idProblem(id) != "" {
		return nil
	}
	return id
}

// readEnvelope reads r's body (at most limit bytes) and applies the
// strict envelope (checkEnvelope). It returns the body for the SDK, or
// the refusal. Bodies that are not JSON at all pass: the SDK answers
// those with a parse error.
func readEnvelope(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *envelopeError, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, nil, err
	}
	if refused, _ := checkEnvelope(body); refused != nil {
		return nil, refused, nil
	}
	return body, nil, nil
}

// errorMessage renders a JSON-RPC error message, newline-terminated. id is
// echoed byte for byte; nil means null (the id could not be determined).
func errorMessage(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":`)
	enc, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	b.Write(enc)
	b.WriteString("}\n")
	return b.Bytes()
}

// writeRPCError answers a JSON-RPC error with the given HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	b := errorMessage(id, code, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// bodyTooLarge reports whether err is http.MaxBytesReader's refusal.
func bodyTooLarge(err error) (int64, bool) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe.Limit, true
	}
	return 0, false
}
