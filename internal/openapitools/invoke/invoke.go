package invoke

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// Result is the outcome of one call to the service. It is the whole
// answer whether the call succeeded, failed with a status ≥ 400, or did
// not complete.
//
// Its fields carry no schema descriptions: the MCP layer repeats this
// schema in every generated tool of tools/list, so the shape is explained
// once, in the server instructions, instead.
type Result struct {
	// Status is the HTTP status; 0 when no response arrived.
	Status int `json:"status"`
	// Headers are the response headers, every value kept.
	Headers map[string][]string `json:"headers"`
	// Body is the response body: the JSON value itself (a json.RawMessage)
	// when the response is JSON, else text, else base64 (BodyEncoding says
	// so); nil when empty.
	Body any `json:"body"`
	// BodyEncoding is "base64" for a body that is not UTF-8 text.
	BodyEncoding string `json:"bodyEncoding,omitempty"`
	// Truncated is true when the result was cut: the body did not arrive
	// whole (Failure says why), or the body or headers did not fit in the
	// byte cap, which bounds the whole encoded result.
	Truncated bool `json:"truncated"`
	// TimedOut is true when the call ran out of time.
	TimedOut bool `json:"timedOut"`
	// DurationMs is how long the call took, in milliseconds.
	DurationMs float64 `json:"durationMs"`
	// Failure says why the call did not complete, in a sentence with what
	// to do (never a transport's own text); empty when it did.
	Failure string `json:"failure,omitempty"`
	// Cause is the transport's own error behind Failure, for the server's
	// log; it never reaches the caller.
	Cause error `json:"-"`
}

// IsError reports whether the result is a failure: a status of 400 or
// more, or no complete response (none at all, or a body cut short).
func (r *Result) IsError() bool {
	return r.Status >= 400 || r.Status == 0 || r.TimedOut || r.Failure != ""
}

// Diagnostic codes. The first five are written by whoever decodes and
// checks a tool's arguments before [Call] (the MCP server's
// argument decoder); REQUEST_INVALID and INVALID_VALUE are also written by
// Call for what only the request shows.
const (
	DiagNotAnObject    = "NOT_AN_OBJECT"      // the arguments are not one JSON object
	DiagUnknown        = "UNKNOWN_ARGUMENT"   // a name the tool does not accept
	DiagRequired       = "REQUIRED"           // a required argument is missing
	DiagInvalidValue   = "INVALID_VALUE"      // a value does not match its schema
	DiagRequestInvalid = "REQUEST_INVALID"    // the OpenAPI request validator rejected the request
	DiagDuplicate      = "DUPLICATE_ARGUMENT" // a name given twice in the arguments object
)

// Diagnostic is one fault in a tool's arguments, the one shape of an
// argument diagnostic on the wire (the MCP layer sends these as a refused
// generated tool's "diagnostics"). Like Result, it carries no schema
// descriptions.
type Diagnostic struct {
	// Field is the argument at fault; empty for the arguments as a whole.
	Field string `json:"field"`
	// Code is one of the Diag* codes.
	Code string `json:"code"`
	// Expected says what the argument accepts. The argument decoder
	// writes it from the schema (the MCP layer fills it for Call's
	// diagnostics too, so one wording describes every argument);
	// Call sets it only for a rule of its own (a header value
	// without line breaks).
	Expected string `json:"expected,omitempty"`
	Message  string `json:"message"`
	// DidYouMean is the accepted name nearest to an unknown one.
	DidYouMean string `json:"didYouMean,omitempty"`
}

// ArgumentError is returned by [Call] when the request the
// arguments make cannot be sent: a value that would leave the base URL's
// path, a header with a line break, the OpenAPI request validator's
// verdict. Nothing was sent to the service.
type ArgumentError struct {
	Tool        string
	Accepted    []string
	Diagnostics []Diagnostic
}

func (e *ArgumentError) Error() string {
	var msgs []string
	for _, d := range e.Diagnostics {
		if d.Field != "" {
			msgs = append(msgs, d.Field+": "+d.Message)
		} else {
			msgs = append(msgs, d.Message)
		}
	}
	return fmt.Sprintf("%s was not called: %s", e.Tool, strings.Join(msgs, "; "))
}

// Call calls the service of t with arguments a caller has already
// decoded and checked against t's InputSchema (the MCP layer does, and
// writes the messages of refused arguments): one value per argument,
// numbers as json.Number so none loses precision, no nulls. What only the
// request can show (a value that would leave the base URL's path, a header
// with a line break, the OpenAPI request validator's verdict) is still
// refused here with an *ArgumentError, and nothing is sent. A call t needs
// confirmed (t.NeedsConfirmation) asks the context's Confirmer first.
func Call(ctx context.Context, t *openapitools.Tool, typed map[string]any) (*Result, error) {
	c := newCall(t)
	r, err := c.serialize(typed)
	if err != nil {
		field := "body"
		var fe *fieldError
		if errors.As(err, &fe) {
			field = fe.field
		}
		return nil, &ArgumentError{Tool: t.Name, Accepted: t.Accepted(), Diagnostics: []Diagnostic{{Field: field, Code: DiagInvalidValue, Message: err.Error()}}}
	}
	if diags := r.checkHeaders(c); len(diags) > 0 {
		return nil, &ArgumentError{Tool: t.Name, Accepted: t.Accepted(), Diagnostics: diags}
	}
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, &ArgumentError{Tool: t.Name, Accepted: t.Accepted(), Diagnostics: []Diagnostic{{Code: DiagInvalidValue, Message: "the request cannot be built: " + err.Error()}}}
	}
	if diags := c.kinValidate(ctx, req, r, typed); len(diags) > 0 {
		return nil, &ArgumentError{Tool: t.Name, Accepted: t.Accepted(), Diagnostics: diags}
	}
	// A person's answer is not part of the call's time limit.
	if err := confirm(ctx, t, req, r.body); err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, c.op.Timeout())
	defer cancel()
	req = req.WithContext(callCtx)
	creds, err := c.op.Credentials()
	if err != nil {
		return nil, err
	}
	applyCredentials(req, creds)
	return c.send(ctx, callCtx, req), nil
}

// call is one call being made: the tool's operation as projection
// describes it.
type call struct {
	op     openapitools.Operation
	params []openapitools.Param // read through param(i)
	body   *body                // nil: the operation takes no body
}

// param is the call's i'th parameter, as a *param: the slice is the
// operation's own copy, used in place (no copy per parameter).
func (c *call) param(i int) *param { return (*param)(&c.params[i]) }

// param and body are the operation's descriptions, with the serializers
// of this package as methods.
type (
	param openapitools.Param
	body  openapitools.Body
)

func newCall(t *openapitools.Tool) *call {
	c := &call{op: t.Operation()}
	c.params = c.op.Params()
	if b, ok := c.op.Body(); ok {
		bb := body(b)
		c.body = &bb
	}
	return c
}

// checkHeaders refuses header and cookie values that would split the
// request.
func (r *request) checkHeaders(c *call) []Diagnostic {
	var diags []Diagnostic
	bad := func(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }
	for i := range c.params {
		pr := c.param(i)
		if pr.In == "header" && bad(r.header[pr.Name]) {
			diags = append(diags, Diagnostic{Field: pr.Arg, Code: DiagInvalidValue, Expected: "a value without line breaks",
				Message: fmt.Sprintf("%q is sent as a header, and a header value cannot contain CR, LF or NUL", pr.Arg)})
		}
	}
	for _, c := range r.cookies {
		if bad(c) {
			diags = append(diags, Diagnostic{Code: DiagInvalidValue, Expected: "a value without line breaks", Message: "a cookie value cannot contain CR, LF or NUL"})
			break
		}
	}
	return diags
}

// newRequest assembles the HTTP request (without credentials).
func (c *call) newRequest(ctx context.Context, r *request) (*http.Request, error) {
	u := c.op.BaseURL() + r.path
	if len(r.query) > 0 {
		u += "?" + strings.Join(r.query, "&")
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.op.Method(), u, body)
	if err != nil {
		return nil, err
	}
	// Whatever the path and arguments hold, the request goes to the base
	// URL's origin and nowhere else: credentials are meant for it alone.
	if req.URL.Scheme != c.op.Scheme() || req.URL.Host != c.op.Host() || req.URL.User != nil {
		return nil, fmt.Errorf("it would leave %s://%s", c.op.Scheme(), c.op.Host())
	}
	req.Header.Set("Accept", c.op.Accept())
	req.Header.Set("User-Agent", "kubepact")
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for i := range c.params {
		pr := c.param(i)
		if v, ok := r.header[pr.Name]; ok {
			req.Header.Set(pr.Name, v)
		}
	}
	if len(r.cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(r.cookies, "; "))
	}
	return req, nil
}

// kinOptions are kin-openapi's validator options for every call: all
// faults at once, no authentication, no defaults written into the request,
// and a schema fault in its own words. ValidateRequest only reads them, so
// one value serves every call.
var kinOptions = func() *openapi3filter.Options {
	opts := &openapi3filter.Options{
		MultiError:          true,
		AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
		SkipSettingDefaults: true,
	}
	opts.WithCustomSchemaErrorFunc(func(e *openapi3.SchemaError) string { return e.Reason })
	return opts
}()

// kinValidate runs kin-openapi's request validator on a shallow copy of
// the request: parameters as serialized and the encoded body.
func (c *call) kinValidate(ctx context.Context, req *http.Request, r *request, args map[string]any) (diags []Diagnostic) {
	route := c.op.Route()
	if route == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			diags = nil // a validator crash must not block a call the schema accepted
		}
	}()
	// A shallow copy, as WithContext makes: the validator replaces the
	// copy's Body (it reads it), and with SkipSettingDefaults it writes
	// nothing else, so the header map and URL it shares with req stay as
	// they are (TestKinValidateLeavesRequest). Clone would copy them for
	// about four objects a call.
	vreq := req.WithContext(ctx)
	if r.body != nil {
		vreq.Body = io.NopCloser(bytes.NewReader(r.body))
	}
	err := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request:    vreq,
		PathParams: r.pathParams,
		Route:      route.Kin,
		Options:    kinOptions,
	})
	if err == nil {
		return nil
	}
	for _, e := range flatten(err) {
		if c.kinCannotDecode(e) {
			continue
		}
		diags = append(diags, c.kinDiagnostics(e, args)...)
	}
	return diags
}

// kinCannotDecode reports a validator error about a parameter that
// kin-openapi cannot read back, while the request sends it as OpenAPI
// says: a cookie whose schema is an array or an object in the default
// form style with explode (it reports such a parameter even when it was
// not sent). The value was already checked against its schema.
func (c *call) kinCannotDecode(err error) bool {
	var re *openapi3filter.RequestError
	if !errors.As(err, &re) || re.Parameter == nil || re.Parameter.In != "cookie" {
		return false
	}
	for i := range c.params {
		pr := c.param(i)
		if pr.In == "cookie" && pr.Name == re.Parameter.Name {
			return pr.Kind != "" && pr.Explode && pr.ContentType == ""
		}
	}
	return false
}

// flatten lists the errors of a MultiError (nested ones too). It looks at
// err itself, not what it wraps: a RequestError wrapping a MultiError is
// one error, the request part it names kept.
func flatten(err error) []error {
	if me, ok := err.(openapi3.MultiError); ok { //nolint:errorlint // only err itself, by design

		var out []error
		for _, e := range me {
			out = append(out, flatten(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// kinDiagnostics writes the request validator's verdict on one part of the
// request in this package's words: the argument at fault (with the path
// into a body), and the rule of the operation's OpenAPI definition that
// the request, as it would be sent, breaks. The validator's own text
// (which names its internals and may repeat a credential) is never passed
// on; nor is the value, which the caller gave.
func (c *call) kinDiagnostics(err error, args map[string]any) []Diagnostic {
	var re *openapi3filter.RequestError
	if !errors.As(err, &re) {
		return []Diagnostic{{Code: DiagRequestInvalid, Message: "the request as it would be sent does not satisfy the operation's OpenAPI definition"}}
	}
	field, in := "", ""
	switch {
	case re.Parameter != nil:
		in = re.Parameter.In
		for i := range c.params {
			pr := c.param(i)
			if pr.In == re.Parameter.In && strings.EqualFold(pr.Name, re.Parameter.Name) {
				field = pr.Arg
			}
		}
	case re.RequestBody != nil:
		field, in = "body", "body"
	}
	var schemaErrs []*openapi3.SchemaError
	for _, e := range flatten(re.Err) {
		var se *openapi3.SchemaError
		if errors.As(e, &se) {
			schemaErrs = append(schemaErrs, se)
		}
	}
	if len(schemaErrs) > 0 {
		diags := make([]Diagnostic, 0, len(schemaErrs))
		for _, se := range schemaErrs {
			at := field
			if field == "body" {
				at = pathInto(args["body"], "body", se.JSONPointer())
			}
			diags = append(diags, Diagnostic{Field: at, Code: DiagRequestInvalid,
				Message: fmt.Sprintf("%q as it would be sent (%s) does not satisfy the operation's OpenAPI definition: it %s", at, where(in), schemaRule(se))})
		}
		return diags
	}
	d := Diagnostic{Field: field, Code: DiagRequestInvalid}
	switch {
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired) && in == "body":
		d.Message = "the operation's OpenAPI definition requires a request body (\"body\"), and none would be sent"
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
		d.Message = fmt.Sprintf("%q is required by the operation's OpenAPI definition (%s), and would not be sent", field, where(in))
	case errors.Is(re.Err, openapi3filter.ErrInvalidEmptyValue):
		d.Message = fmt.Sprintf("%q would be sent empty (%s), which the operation's OpenAPI definition does not allow", field, where(in))
	case in == "body":
		d.Message = "the request body, as it would be encoded, is not one the operation's OpenAPI definition takes (its media type or its encoding)"
	case field != "":
		d.Message = fmt.Sprintf("%q, as it would be serialized (%s), cannot be read back as the operation's OpenAPI definition declares it", field, where(in))
	default:
		d.Message = "the request as it would be sent does not satisfy the operation's OpenAPI definition"
	}
	return []Diagnostic{d}
}

// where names the part of the request a parameter or the body goes in.
func where(in string) string {
	switch in {
	case "body":
		return "the request body"
	case "":
		return "the request"
	}
	return "a " + in + " parameter"
}

// schemaRule says, in our words, which rule of its schema a value breaks:
// the keyword and the schema's value for it.
func schemaRule(se *openapi3.SchemaError) string {
	var want string
	if se.Schema != nil && se.SchemaField != "" {
		if raw, err := json.Marshal(se.Schema); err == nil {
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) == nil && len(m[se.SchemaField]) > 0 {
				want = string(m[se.SchemaField])
				if len(want) > 120 {
					want = want[:117] + "..."
				}
			}
		}
	}
	if want == "" {
		if se.SchemaField == "" {
			return "does not match its schema"
		}
		return fmt.Sprintf("breaks its schema's %q rule", se.SchemaField)
	}
	switch se.SchemaField {
	case "format":
		return "must have the format " + want
	case "minimum":
		return "must be at least " + want
	case "maximum":
		return "must be at most " + want
	case "exclusiveMinimum":
		return "must be more than " + want
	case "exclusiveMaximum":
		return "must be less than " + want
	case "minLength":
		return "must be at least " + want + " character(s) long"
	case "maxLength":
		return "must be at most " + want + " character(s) long"
	case "minItems":
		return "must have at least " + want + " item(s)"
	case "maxItems":
		return "must have at most " + want + " item(s)"
	case "pattern":
		return "must match the pattern " + want
	case "enum":
		return "must be one of " + want
	case "type":
		return "must be of type " + want
	case "required":
		return "must have the field(s) " + want
	}
	return fmt.Sprintf("breaks its schema's %q rule (%s)", se.SchemaField, want)
}

// pathInto writes a JSON pointer into v as this package's paths are
// written: body.price.currency, body.items[2].
func pathInto(v any, base string, ptr []string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, seg := range ptr {
		switch x := v.(type) {
		case []any:
			fmt.Fprintf(&b, "[%s]", seg)
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
				v = x[i]
				continue
			}
			v = nil
		case map[string]any:
			b.WriteString("." + seg)
			v = x[seg]
		default:
			b.WriteString("." + seg)
			v = nil
		}
	}
	return b.String()
}

// send performs the request and reads the response under the caps.
func (c *call) send(parent, ctx context.Context, req *http.Request) *Result {
	start := time.Now()
	res := &Result{Headers: map[string][]string{}}
	defer func() { res.DurationMs = float64(time.Since(start).Microseconds()) / 1000 }()
	resp, err := c.op.Client().Do(req)
	if err != nil {
		res.TimedOut, res.Failure = failure(parent, ctx, req, err)
		res.Cause = err
		return res
	}
	defer func() { _ = resp.Body.Close() }()
	res.Status = resp.StatusCode
	limit := c.op.MaxResponseBytes()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if int64(len(data)) > limit {
		data, res.Truncated = data[:limit], true
	}
	if err != nil {
		// The body ended before its end: a short read against
		// Content-Length, a reset, an early EOF in a chunked body. What
		// arrived is returned, but the call did not succeed.
		res.TimedOut, res.Failure = failure(parent, ctx, req, err)
		res.Failure = "the response body was cut short: " + res.Failure
		res.Cause, res.Truncated = err, true
	}
	res.fit(resp.Header, data, resp.Header.Get("Content-Type"), limit)
	return res
}

// failure explains an incomplete call and tells a timeout apart.
func failure(parent, ctx context.Context, req *http.Request, err error) (bool, string) {
	switch {
	case parent.Err() != nil:
		return false, "the call was cancelled"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return true, "the call timed out"
	}
	return false, transportFailure(req.URL, err)
}

// fit sets the headers and the body so that the whole result, JSON
// encoded, stays within limit bytes: headers take at most half of what
// the other fields leave, the body the rest. What does not fit is left
// out (a header) or cut (the body), and Truncated says so. The encoded
// size is what counts, not the raw one: escaping can make a byte six.
func (r *Result) fit(hdr http.Header, data []byte, contentType string, limit int64) {
	r.BodyEncoding = "base64" // the longest the other fields can be
	base, _ := json.Marshal(r)
	r.BodyEncoding = ""
	// durationMs is set last; 24 bytes hold any float64 it can be.
	room := limit - int64(len(base)) + int64(len("null")) - 24
	headerRoom := room / 2
	for _, k := range openapischema.SortedKeys(hdr) {
		cost := int64(jsonStringLen(k) + jsonStringsLen(hdr[k]) + 2) // ':' and ','
		if cost > headerRoom {
			r.Truncated = true
			continue
		}
		headerRoom -= cost
		room -= cost
		r.Headers[k] = hdr[k] // the response's own, read by no one else
	}
	var cut bool
	r.Body, r.BodyEncoding, cut = encodeBody(data, contentType, r.Truncated, room)
	r.Truncated = r.Truncated || cut
}

// encodeBody returns a JSON body (unless cut short) as the JSON value
// itself, else text, else base64, and whether it had to be cut to encode
// within room bytes. JSON is checked and compacted, not decoded: the value
// is passed on as it came, so no number loses precision and the result is
// not rebuilt from a map on every call.
func encodeBody(data []byte, contentType string, partial bool, room int64) (body any, encoding string, cut bool) {
	if len(data) == 0 {
		return nil, "", false
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if !partial && openapitools.MediaEncoding(mt) == "json" && mt != "*/*" && json.Valid(data) {
		if enc, err := json.Marshal(json.RawMessage(data)); err == nil && int64(len(enc)) <= room {
			return json.RawMessage(enc), "", false
		}
	}
	room -= 2 // the quotes of a string
	if text := trimPartialRune(data); utf8.Valid(text) {
		n := 0
		for n < len(text) {
			r, size := utf8.DecodeRune(text[n:])
			cost := int64(escapedLen(r, size))
			if cost > room {
				break
			}
			room -= cost
			n += size
		}
		return string(text[:n]), "", n < len(data)
	}
	n := max(room, 0) / 4 * 3
	if n >= int64(len(data)) {
		return base64.StdEncoding.EncodeToString(data), "base64", false
	}
	return base64.StdEncoding.EncodeToString(data[:n]), "base64", true
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of data
// (a cut can fall inside a character), so cut text stays text.
func trimPartialRune(data []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(data); i++ {
		if utf8.RuneStart(data[len(data)-i]) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i]
			}
			break
		}
	}
	return data
}

// escapedLen is how many bytes encoding/json writes for r (size bytes of
// UTF-8) inside a string: control characters, the HTML-sensitive <, > and
// &, and U+2028/U+2029 become \u escapes of six bytes.
// jsonStringLen is len(json.Marshal(s)), counted without marshalling (fit
// measures every response header on every call).
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += escapedLen(r, size)
		i += size
	}
	return n
}

// jsonStringsLen is len(json.Marshal(v)), counted.
func jsonStringsLen(v []string) int {
	if v == nil {
		return len("null")
	}
	n := 2 + max(len(v)-1, 0) // brackets and commas
	for _, s := range v {
		n += jsonStringLen(s)
	}
	return n
}

func escapedLen(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029', r == utf8.RuneError && size == 1:
		return 6
	}
	return size
}
