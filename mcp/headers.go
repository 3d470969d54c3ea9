package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The standard request headers of the Streamable HTTP transport from
// protocol 2026-07-28 on (SEP-2243): every request names its protocol
// version and method in headers, and the three methods that address one
// thing name it too, so that a proxy, a gateway or a rate limiter can
// route and count requests without reading bodies.
const (
	protocolVersionHeader = "Mcp-Protocol-Version"
	methodHeader          = "Mcp-Method"
	nameHeader            = "Mcp-Name"
	// metaProtocolVersion is the request _meta key that carries the
	// protocol version in the body on 2026-07-28.
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
)

// codeHeaderMismatch is the 2026-07-28 error for a request whose standard
// headers are missing or say something else than its body (HeaderMismatch),
// answered with 400.
const codeHeaderMismatch = -32020

// nameFields maps the methods whose Mcp-Name header mirrors one of their
// params to that param.
var nameFields = map[string]string{
	"tools/call":     "name",
	"prompts/get":    "name",
	"resources/read": "uri",
}

// The sentinel that marks a header value sent as base64 (a value that is
// not plain visible ASCII, such as a resource URI with non-ASCII letters).
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// maxShownHeader bounds how much of a header value an error repeats.
const maxShownHeader = 128

// checkStandardHeaders holds a single HTTP message to the standard request
// headers, from what the strict envelope (c, its one scan of the body)
// found, before the SDK sees it. The SDK checks Mcp-Method and Mcp-Name itself; these are the
// cases it lets through or answers in terms that do not say what to send:
//
//   - a header given more than once: the SDK reads the first line, while a
//     proxy or a rate limiter in front may read the last, so the request
//     run would not be the one routed or counted;
//   - a body whose _meta says 2026-07-28 without the Mcp-Protocol-Version
//     header to match (the request would otherwise be judged as a 2025-era
//     one and refused as an unsupported version);
//   - Mcp-Name sent base64-encoded (the client encodes names that are not
//     plain ASCII), which the SDK compares undecoded: the header is
//     replaced by the decoded value once it matches the body.
//
// Missing or mismatched Mcp-Method and Mcp-Name are answered here too, so
// every refusal says what the request carried and what it must carry. A
// refusal is codeHeaderMismatch, answered with 400 and the request's id.
func checkStandardHeaders(h http.Header, c envelopeCheck) *envelopeError {
	m := c.msg
	var id json.RawMessage
	if m != nil && m.method {
		id = m.id // a request's id, which the envelope found the SDK echoes exactly
	}
	refuse := func(format string, args ...any) *envelopeError {
		return &envelopeError{code: codeHeaderMismatch, id: id, msg: "Header mismatch: " + fmt.Sprintf(format, args...)}
	}
	for _, name := range []string{protocolVersionHeader, methodHeader, nameHeader} {
		if n := len(h.Values(name)); n > 1 {
			return refuse("the request carries the %s header %d times; send it once (proxies and servers would read different lines)", name, n)
		}
	}
	if m == nil {
		return nil
	}
	method, ok := jsonString(m.methodRaw)
	if !ok || method == "" {
		return nil // a batch (refused on 2026-07-28) or a response: nothing to route
	}
	version := h.Get(protocolVersionHeader)
	if version < statelessEra {
		bodyVersion, ok := jsonString(m.metaVersionRaw)
		if !ok || bodyVersion < statelessEra {
			return nil // a 2025-era message: these headers are not part of it
		}
		said := "has no " + protocolVersionHeader + " header"
		if version != "" {
			said = fmt.Sprintf("has the %s header %s", protocolVersionHeader, shownHeader(version))
		}
		return refuse("params._meta says protocol %s but the request %s; a request of protocol %s and later carries %s: %s, %s and, for %s, %s",
			shownHeader(bodyVersion), said, statelessEra, protocolVersionHeader, shownHeader(bodyVersion), methodHeader, "tools/call, prompts/get and resources/read", nameHeader)
	}
	switch got := h.Get(methodHeader); {
	case got == "":
		return refuse("the %s header is missing; on protocol %s every request carries it with its method (here %s: %s)", methodHeader, statelessEra, methodHeader, shownHeader(method))
	case got != method:
		return refuse("the %s header says %s but the body's method is %s; send the same method in both, exactly (methods are case-sensitive)", methodHeader, shownHeader(got), shownHeader(method))
	}
	field, ok := nameFields[method]
	if !ok {
		return nil
	}
	raw := m.nameRaw
	if field == "uri" {
		raw = m.uriRaw
	}
	want, ok := jsonString(raw)
	if !ok {
		return nil // absent or not a string: the SDK answers params it cannot use
	}
	vals := h.Values(nameHeader)
	if len(vals) == 0 {
		return refuse("the %s header is missing; a %s request carries it with its params.%s (here %s: %s)", nameHeader, method, field, nameHeader, shownHeader(want))
	}
	got, ok := decodeHeaderValue(strings.TrimSpace(vals[0]))
	if !ok {
		return refuse("the %s header %s starts with %s but is not valid base64 of UTF-8 text up to %s; send the value plain, or base64 between %s and %s", nameHeader, shownHeader(vals[0]), base64Prefix, base64Suffix, base64Prefix, base64Suffix)
	}
	if got != want {
		return refuse("the %s header says %s but the body's params.%s is %s; send the same value in both", nameHeader, shownHeader(got), field, shownHeader(want))
	}
	if got != vals[0] {
		h.Set(nameHeader, got) // the SDK compares the header as sent: give it the decoded value
	}
	return nil
}

// decodeHeaderValue is v with the base64 sentinel decoded; a plain value
// is itself. It reports false for a sentinel around anything but base64
// of UTF-8 text.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(inner)
	if err != nil || !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}

// shownHeader quotes a value from the request for an error, cut to
// maxShownHeader bytes (on a rune boundary): a header can be as long as
// the server reads, and the answer need not repeat all of it.
func shownHeader(v string) string {
	if len(v) <= maxShownHeader {
		return fmt.Sprintf("%q", v)
	}
	cut := maxShownHeader
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", v[:cut], len(v))
}

// jsonString is json.Unmarshal of raw into a string, and whether raw is
// one: a string with no escape, control byte or invalid UTF-8 (which
// Unmarshal would replace) is its bytes between the quotes, without the
// decoder's allocations.
func jsonString(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false // no value (no _meta.protocolVersion): Unmarshal's error, without making it
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		plain := utf8.Valid(inner)
		for _, c := range inner {
			if c < 0x20 || c == '\\' || c == '"' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), true
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
