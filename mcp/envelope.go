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
	"unicode/utf16"
	"unicode/utf8"
)

// JSON-RPC error codes kubepact's transports answer themselves, before
// the SDK sees a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
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
// does not refuse that (whoever decodes it answers a parse error).
func checkEnvelope(body []byte) (refused *envelopeError, valid bool) {
	c := inspectEnvelope(body)
	return c.refused, c.valid
}

// envelopeCheck is what inspectEnvelope found.
type envelopeCheck struct {
	refused *envelopeError // the rule broken, or nil
	valid   bool           // one JSON value
	// badParams is a request whose params the SDK could not decode (see
	// paramsRefusal), when the envelope itself is sound; the transports
	// answer it as the SDK would, in words instead of a Go decoding error.
	badParams *envelopeError
	// plainRequest: one request or notification the SDK's decoder takes
	// as such without fail: "jsonrpc" written "2.0", a string "method"
	// other than initialize, no "error" member, an id it echoes exactly
	// (if any). Anything else a transport must have the SDK's decoder try
	// before trusting it with the session.
	plainRequest bool
	// stream: the message opens a stream that lasts as long as the
	// client likes (subscriptions/listen): a POST of it is no call in
	// progress, as a GET stream is none.
	stream bool
	// msg is the one message of a document that is not a batch, or nil.
	msg *envMessage
}

// listenMethod is the 2026-07-28 era's stream of server notifications:
// its POST is answered with a stream that stays open until the client
// ends it, the stateless era's GET stream.
const listenMethod = "subscriptions/listen"

// inspectEnvelope applies the strict envelope (checkEnvelope) in one
// scan of body and says what kind of message it is.
func inspectEnvelope(body []byte) envelopeCheck {
	w := envelopeWalk{body: body, stack: make([]envFrame, 0, 8), names: make([]envName, 0, 2*linearNames)}
	if msg, ok := w.walk(); !ok {
		return envelopeCheck{}
	} else if msg != "" {
		return envelopeCheck{refused: &envelopeError{code: codeInvalidRequest, id: requestID(body), msg: "Invalid Request: " + msg}, valid: true}
	}
	if refused := w.idRefusal(); refused != nil {
		return envelopeCheck{refused: refused, valid: true}
	}
	c := envelopeCheck{valid: true, badParams: w.paramsRefusal(), stream: w.opensStream()}
	if m := w.single(); m != nil {
		c.msg = m
		c.plainRequest = string(m.version) == `"2.0"` && len(m.methodRaw) > 0 && m.methodRaw[0] == '"' &&
			string(m.methodRaw) != `"initialize"` && !m.hasError
	}
	return c
}

// opensStream reports whether a message of the document is a request
// whose answer is a stream (listenMethod), its method written plainly or
// with escapes.
func (w *envelopeWalk) opensStream() bool {
	for _, m := range w.msgs {
		raw := m.methodRaw
		if len(raw) == 0 || raw[0] != '"' {
			continue
		}
		if !bytes.ContainsRune(raw, '\\') {
			if string(raw) == `"`+listenMethod+`"` {
				return true
			}
			continue
		}
		var name string
		if json.Unmarshal(raw, &name) == nil && name == listenMethod {
			return true
		}
	}
	return false
}

// single is the message of a document that is one message, or nil.
func (w *envelopeWalk) single() *envMessage {
	if w.batch || len(w.msgs) != 1 {
		return nil
	}
	return w.msgs[0]
}

// idRefusal refuses the first message whose id the SDK would not echo
// exactly, or returns nil.
func (w *envelopeWalk) idRefusal() *envelopeError {
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
		return e
	}
	return nil
}

// jsonKind is the kind of a JSON value, told by its first byte; kinds
// combine as a set of those a member accepts.
type jsonKind uint8

const (
	kindNull jsonKind = 1 << iota
	kindString
	kindNumber
	kindBool
	kindObject
	kindArray
)

// kindAt is the kind of the value starting at b[pos], or 0 when no value
// starts there (the grammar check then says so).
func kindAt(b []byte, pos int) jsonKind {
	if pos >= len(b) {
		return 0
	}
	switch c := b[pos]; {
	case c == '"':
		return kindString
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == 't' || c == 'f':
		return kindBool
	case c == 'n':
		return kindNull
	case c == '-' || '0' <= c && c <= '9':
		return kindNumber
	}
	return 0
}

// words says what a value of the kinds k is, for a message.
func (k jsonKind) words() string {
	var parts []string
	for _, n := range []struct {
		k jsonKind
		w string
	}{{kindString, "a string"}, {kindNumber, "a number"}, {kindBool, "a boolean"}, {kindObject, "an object"}, {kindArray, "an array"}, {kindNull, "null"}} {
		if k&n.k != 0 {
			parts = append(parts, n.w)
		}
	}
	return strings.Join(parts, " or ")
}

// paramKinds are the kinds the SDK decodes the MCP parameters a client
// sends into (null everywhere as well: it reads as absent). Each name has
// one kind across the methods that take it; a value of another kind would
// be answered with the SDK's Go decoding error ("json: cannot unmarshal
// number into Go struct field CallToolParamsRaw.name of type string").
// A tool's arguments are not here: the SDK keeps them raw, and the tool
// answers arguments that are not an object itself, listing its own.
var paramKinds = map[string]jsonKind{
	"_meta": kindObject, "name": kindString, "cursor": kindString, "uri": kindString,
	"protocolVersion": kindString, "capabilities": kindObject, "clientInfo": kindObject, "level": kindString,
	"ref": kindObject, "argument": kindObject, "context": kindObject,
}

// paramsNeeded are the requests the SDK refuses without params, with what
// their params hold.
var paramsNeeded = map[string]string{
	"initialize":            `an object with "protocolVersion", "capabilities" and "clientInfo"`,
	"tools/call":            `an object with "name" (the tool) and "arguments"`,
	"resources/read":        `an object with "uri"`,
	"resources/subscribe":   `an object with "uri"`,
	"resources/unsubscribe": `an object with "uri"`,
	"prompts/get":           `an object with "name" and "arguments"`,
	"logging/setLevel":      `an object with "level"`,
	"completion/complete":   `an object with "ref" and "argument"`,
}

// paramsRefusal is the first request (one with an id) whose params the
// SDK would refuse with its decoder's words: params that are not an
// object, a parameter of paramKinds of another kind, or no params where
// paramsNeeded. It is answered Invalid params, naming the parameter and
// what it must be. Notifications are left to the SDK, which answers none.
func (w *envelopeWalk) paramsRefusal() *envelopeError {
	for _, m := range w.msgs {
		if !m.method || !m.hasID {
			continue
		}
		var msg string
		method := m.methodName()
		needs := paramsNeeded[string(method)] // no allocation: a map index by converted bytes
		switch {
		case m.hasParams && m.paramsKind&(kindObject|kindNull) == 0:
			msg = fmt.Sprintf(`"params" must be an object of named parameters; got %s`, m.paramsKind.words())
		case m.badParam != "":
			msg = fmt.Sprintf("%q must be %s; got %s", m.badParam, m.badWant.words(), m.badKind.words())
		case needs != "" && (!m.hasParams || m.paramsKind == kindNull):
			msg = fmt.Sprintf(`%s needs "params": %s`, method, needs)
		default:
			continue
		}
		e := &envelopeError{code: codeInvalidParams}
		if w.batch {
			e.msg = fmt.Sprintf("Invalid params: batch element %d: %s", m.index, msg)
		} else {
			e.msg, e.id = "Invalid params: "+msg, m.id
		}
		return e
	}
	return nil
}

// methodName is the message's method, when it is a string written
// without escapes (the methods paramsNeeded names are).
func (m *envMessage) methodName() []byte {
	raw := m.methodRaw
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return nil
	}
	return raw[1 : len(raw)-1]
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
	first  bool        // no member or element yet
	key    []byte      // the current member's name (objects)
	index  int         // the current element's index (arrays)
	msg    *envMessage // the message this object is (roleMessage)
	// The member names so far: w.names[names:] while few, then the maps.
	names   int
	byName  map[string]struct{}
	byFold  map[string]string // fold → the name as written
	manyKey bool
}

// envMessage is what the walk keeps of one message: its id as written
// and whether it names a method (is a request or a notification).
type envMessage struct {
	index     int
	hasID     bool
	id        json.RawMessage // nil for an object or array id
	method    bool
	methodRaw []byte // the method's value as written, when a scalar
	version   []byte // the jsonrpc member's value as written, when a scalar
	hasError  bool
	// hasParams and paramsKind: the params member, and its kind.
	hasParams  bool
	paramsKind jsonKind
	// badParam is the path of its first parameter of paramKinds whose
	// value is of another kind (badKind; badWant is what it must be).
	badParam         string
	badKind, badWant jsonKind
	// nameRaw, uriRaw and metaVersionRaw: params.name, params.uri and
	// params._meta's protocol version as written, when scalars (for the
	// standard request headers, see checkStandardHeaders).
	nameRaw, uriRaw, metaVersionRaw []byte
}

// envName is one member name of an open object: as decoded, and folded.
type envName struct{ name, fold []byte }

// linearNames is how many member names an object keeps in a list before
// it indexes them in maps: a short list is cheaper to scan than to hash.
const linearNames = 16

// envelopeWalk scans one document byte by byte: it validates the JSON
// grammar as encoding/json does and checks every member name, decoding
// only names, never values. Open containers are an explicit stack, so
// nesting depth costs heap, never goroutine stack.
type envelopeWalk struct {
	body  []byte
	pos   int
	stack []envFrame
	names []envName // the member names of the open objects, innermost last
	msgs  []*envMessage
	batch bool
	// folds holds the folded ASCII names, one after another: bytes once
	// written are never rewritten, so a slice of an outgrown array stays
	// right.
	folds []byte
}

// walk returns the first rule the document breaks, "" for none, and ok
// false when it is not exactly one JSON value.
func (w *envelopeWalk) walk() (msg string, ok bool) {
	w.ws()
	if msg, ok := w.value(nil); msg != "" || !ok {
		return msg, ok
	}
	for len(w.stack) > 0 {
		w.ws()
		top := &w.stack[len(w.stack)-1]
		if w.pos >= len(w.body) {
			return "", false
		}
		c := w.body[w.pos]
		if top.object && c == '}' || !top.object && c == ']' {
			w.pos++
			w.pop()
			continue
		}
		if !top.first {
			if c != ',' {
				return "", false
			}
			w.pos++
			w.ws()
		}
		if !top.object {
			if !top.first {
				top.index++
			}
			top.first = false
			if msg, ok := w.value(nil); msg != "" || !ok {
				return msg, ok
			}
			continue
		}
		top.first = false
		name, ok := w.name()
		if !ok {
			return "", false
		}
		if msg := w.member(name); msg != "" {
			return msg, true
		}
		w.ws()
		if w.pos >= len(w.body) || w.body[w.pos] != ':' {
			return "", false
		}
		w.pos++
		w.ws()
		var into *[]byte
		if top.role == roleMessage {
			switch m := top.msg; string(name) {
			case "id":
				m.hasID = true
				into = (*[]byte)(&m.id)
			case "method":
				m.method = true
				into = &m.methodRaw
			case "jsonrpc":
				into = &m.version
			case "error":
				m.hasError = true
			case "params":
				m.hasParams, m.paramsKind = true, kindAt(w.body, w.pos)
			}
		}
		switch {
		case top.role == roleParams && string(name) == "name":
			into = &w.stack[len(w.stack)-2].msg.nameRaw
		case top.role == roleParams && string(name) == "uri":
			into = &w.stack[len(w.stack)-2].msg.uriRaw
		case top.role == roleMeta && string(name) == metaProtocolVersion:
			into = &w.stack[len(w.stack)-3].msg.metaVersionRaw
		}
		if top.role == roleParams {
			if want, ok := paramKinds[string(name)]; ok {
				m := w.stack[len(w.stack)-2].msg
				if k := kindAt(w.body, w.pos); k != 0 && k&(want|kindNull) == 0 && m.badParam == "" {
					m.badParam, m.badKind, m.badWant = w.path(), k, want
				}
			}
		}
		if msg, ok := w.value(into); msg != "" || !ok {
			return msg, ok
		}
	}
	w.ws()
	return "", w.pos == len(w.body)
}

// value reads one value: a scalar whole, or the opening of a container
// (pushed for walk to continue). into, when set, receives a scalar's
// bytes as written (a member of the message the walk keeps).
func (w *envelopeWalk) value(into *[]byte) (msg string, ok bool) {
	if w.pos >= len(w.body) {
		return "", false
	}
	start := w.pos
	switch c := w.body[w.pos]; {
	case c == '{' || c == '[':
		if len(w.stack) == maxEnvelopeDepth {
			return fmt.Sprintf("objects and arrays are nested more than %d levels deep; the server reads at most %d", maxEnvelopeDepth, maxEnvelopeDepth), true
		}
		w.pos++
		f := envFrame{object: c == '{', first: true, names: len(w.names)}
		if c == '[' && len(w.stack) == 0 {
			w.batch = true
		}
		if f.object {
			f.role = w.childRole()
			if f.role == roleMessage {
				f.msg = &envMessage{}
				if w.batch {
					f.msg.index = w.stack[0].index
				}
				w.msgs = append(w.msgs, f.msg)
			}
		}
		w.stack = append(w.stack, f)
		return "", true
	case c == '"':
		_, _, ok = w.str()
	case c == '-' || '0' <= c && c <= '9':
		ok = w.number()
	case c == 't':
		ok = w.literal("true")
	case c == 'f':
		ok = w.literal("false")
	case c == 'n':
		ok = w.literal("null")
	}
	if !ok {
		return "", false
	}
	if into != nil {
		*into = w.body[start:w.pos]
	}
	return "", true
}

// pop closes the innermost container.
func (w *envelopeWalk) pop() {
	top := &w.stack[len(w.stack)-1]
	w.names = w.names[:top.names]
	w.stack = w.stack[:len(w.stack)-1]
}

func (w *envelopeWalk) ws() {
	for w.pos < len(w.body) {
		switch w.body[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func (w *envelopeWalk) literal(lit string) bool {
	if len(w.body)-w.pos < len(lit) || string(w.body[w.pos:w.pos+len(lit)]) != lit {
		return false
	}
	w.pos += len(lit)
	return true
}

// number reads a number as the JSON grammar has it: -?(0|[1-9][0-9]*)
// (.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *envelopeWalk) number() bool {
	b, i := w.body, w.pos
	digits := func() bool {
		n := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	w.pos = i
	return true
}

// str reads a string at w.pos (its opening quote) and returns the bytes
// between the quotes and whether they need decoding (an escape, or a
// byte beyond ASCII).
func (w *envelopeWalk) str() (raw []byte, decode bool, ok bool) {
	b := w.body
	i := w.pos + 1
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			raw = b[w.pos+1 : i]
			w.pos = i + 1
			return raw, decode, true
		case c == '\\':
			decode = true
			if i+1 >= len(b) {
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			decode = true
			i++
		default:
			i++
		}
	}
	return nil, false, false
}

// name reads a member name and returns it decoded.
func (w *envelopeWalk) name() ([]byte, bool) {
	if w.pos >= len(w.body) || w.body[w.pos] != '"' {
		return nil, false
	}
	raw, decode, ok := w.str()
	if !ok {
		return nil, false
	}
	if decode {
		raw = unquote(raw)
	}
	return raw, true
}

// hex4 is the value of four hex digits, or -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquote decodes the inside of a valid JSON string as encoding/json
// does: escapes resolved, a surrogate pair joined, and a lone surrogate
// or a byte that is not UTF-8 each become U+FFFD.
func unquote(raw []byte) []byte {
	out := make([]byte, 0, len(raw)+8)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			switch e := raw[i+1]; e {
			case 'u':
				r := hex4(raw[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, hex4(raw[i+2:i+6])); pair != unicode.ReplacementChar {
							out = utf8.AppendRune(out, pair)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
			default:
				out = append(out, unescape(e))
				i += 2
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, unicode.ReplacementChar)
			} else {
				out = append(out, raw[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// unescape is the byte a one-letter escape stands for.
func unescape(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e // '"', '\\' and '/' stand for themselves
}

// member checks the next member name of the innermost object and records
// it; it returns the rule it breaks, or "".
func (w *envelopeWalk) member(name []byte) string {
	top := &w.stack[len(w.stack)-1]
	top.key = name
	fold := w.fold(name)
	if top.manyKey {
		if _, dup := top.byName[string(name)]; dup {
			return fmt.Sprintf("key %q appears twice; every key may appear once, at any depth of the request", w.path())
		}
		if first, ok := top.byFold[string(fold)]; ok {
			return w.caseTwins(first)
		}
		top.byName[string(name)] = struct{}{}
		top.byFold[string(fold)] = string(name)
	} else {
		for _, n := range w.names[top.names:] {
			switch {
			case bytes.Equal(n.name, name):
				return fmt.Sprintf("key %q appears twice; every key may appear once, at any depth of the request", w.path())
			case bytes.Equal(n.fold, fold):
				return w.caseTwins(string(n.name))
			}
		}
		w.names = append(w.names, envName{name, fold})
		if len(w.names)-top.names > linearNames {
			top.manyKey = true
			top.byName, top.byFold = map[string]struct{}{}, map[string]string{}
			for _, n := range w.names[top.names:] {
				top.byName[string(n.name)] = struct{}{}
				top.byFold[string(n.fold)] = string(n.name)
			}
			w.names = w.names[:top.names]
		}
	}
	known := rpcMembers
	switch top.role {
	case roleParams, roleMeta:
		known = paramMembers
	case roleOther:
		return ""
	}
	if m, ok := known[string(fold)]; ok && m != string(name) {
		return fmt.Sprintf("key %q differs only in case from the member %q; JSON-RPC and MCP member names are case-sensitive: spell it %q", w.path(), m, m)
	}
	return ""
}

func (w *envelopeWalk) caseTwins(first string) string {
	return fmt.Sprintf("keys %q and %q differ only in case; names are case-sensitive and a reader that ignores case would take one for the other: give each key once, spelled exactly", w.pathWith([]byte(first)), w.path())
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
	top := &w.stack[len(w.stack)-1]
	switch {
	case top.role == roleMessage && string(top.key) == "params":
		return roleParams
	case top.role == roleParams && string(top.key) == "_meta":
		return roleMeta
	}
	return roleOther
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
func (w *envelopeWalk) pathWith(name []byte) string {
	top := &w.stack[len(w.stack)-1]
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

// foldBytes is foldKey over bytes; a lower-case ASCII name is returned
// as it is.
func foldBytes(b []byte) []byte {
	for _, c := range b {
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return []byte(foldKey(string(b)))
		}
	}
	return b
}

// fold is foldBytes(name) without an allocation of its own for an ASCII
// name: an ASCII letter's class is its lower case (foldRune), so the name
// is lowered into w.folds.
func (w *envelopeWalk) fold(name []byte) []byte {
	upper := false
	for _, c := range name {
		if c >= utf8.RuneSelf {
			return foldBytes(name)
		}
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if !upper {
		return name
	}
	if w.folds == nil {
		w.folds = make([]byte, 0, 256)
	}
	start := len(w.folds)
	for _, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		w.folds = append(w.folds, c)
	}
	return w.folds[start:len(w.folds):len(w.folds)]
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

// notOneValue is the parse error of an HTTP body that is not one JSON
// value (stdio says the same of a line).
const notOneValue = "Parse error: the request body is not one JSON value; send one JSON-RPC message, as JSON, as the body of each POST"

// readEnvelope reads r's body (at most limit bytes) and applies the
// strict envelope (checkEnvelope). It returns the body for the SDK and
// what the check found: whether the message opens a stream, or the
// refusal to answer instead (c.refused): a rule the envelope breaks, a
// body that is not one JSON value (notOneValue), or params the SDK could
// not decode (envelopeCheck.badParams), each in words rather than a
// decoder's.
func readEnvelope(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, c envelopeCheck, err error) {
	body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, envelopeCheck{}, err
	}
	c = inspectEnvelope(body)
	switch {
	case c.refused != nil:
	case !c.valid:
		c.refused = &envelopeError{code: codeParseError, msg: notOneValue}
	case c.badParams != nil:
		c.refused = c.badParams
	}
	if c.refused != nil {
		return nil, c, nil
	}
	return body, c, nil
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
	if err == nil {
		return 0, false // without errors.As's target, an object a request
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe.Limit, true
	}
	return 0, false
}
