package invoke

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"sort"
	"strings"

	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// request is an HTTP request being built from a tool's arguments.
type request struct {
	path        string            // the path with parameters substituted, escaped
	pathParams  map[string]string // serialized values, unescaped, for kin-openapi
	query       []string          // name=value pieces, escaped
	header      map[string]string
	cookies     []string // name=value pieces
	body        []byte
	contentType string
}

// serialize turns validated arguments into the parts of the request, by
// each parameter's location, style and explode, and the body by its media
// type.
func (c *call) serialize(args map[string]any) (*request, error) {
	r := &request{path: c.op.Path(), pathParams: map[string]string{}} // header: made by the first header parameter
	for i := range c.params {
		pr := c.param(i)
		v, ok := args[pr.Arg]
		if !ok || v == nil {
			continue
		}
		switch pr.In {
		case "path":
			raw := pr.pathValue(v, identity)
			r.pathParams[pr.Name] = raw
			escaped := pr.pathValue(v, escapeStrict)
			if escaped == "." || escaped == ".." {
				return nil, &fieldError{field: pr.Arg, msg: fmt.Sprintf("%q would make the path segment %q, which reaches another path than the operation's", pr.Arg, escaped)}
			}
			r.path = strings.ReplaceAll(r.path, "{"+pr.Name+"}", escaped)
		case "query":
			r.query = append(r.query, pr.queryPieces(v)...)
		case "header":
			if r.header == nil {
				r.header = map[string]string{}
			}
			r.header[pr.Name] = pr.headerValue(v)
		case "cookie":
			r.cookies = append(r.cookies, pr.cookiePieces(v)...)
		}
	}
	for seg := range strings.SplitSeq(r.path, "/") {
		if seg == "." || seg == ".." {
			return nil, &fieldError{msg: fmt.Sprintf("the path parameters make the path segment %q, which would reach another path", seg)}
		}
	}
	if c.body != nil {
		if v, ok := args["body"]; ok && v != nil {
			if err := c.body.encode(r, v); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func identity(s string) string { return s }

// fieldError is a value serialize cannot send; field is the argument at
// fault ("" for the arguments together).
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.msg }

// escapeStrict percent-encodes everything but RFC 3986 unreserved
// characters, so a value can never add a path segment, a query parameter
// or a delimiter of its own.
func escapeStrict(s string) string {
	i := 0
	for i < len(s) && unreserved(s[i]) {
		i++
	}
	if i == len(s) {
		return s // nothing to encode (an id, a name): no copy
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// escapeReserved is escapeStrict for allowReserved query parameters: the
// reserved characters that cannot break the query's structure stay.
func escapeReserved(s string) string {
	var b strings.Builder
	for _, part := range strings.SplitAfter(s, "") {
		if len(part) == 1 && strings.ContainsAny(part, ":/?[]@!$'()*+,;") {
			b.WriteString(part)
			continue
		}
		b.WriteString(escapeStrict(part))
	}
	return b.String()
}

// scalar renders one value as text: strings as they are, numbers as
// written, anything structured as JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return ""
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// contentValue is the value of a parameter that declares content instead
// of a schema: JSON for JSON media types, text otherwise.
func (pr *param) contentValue(v any) (string, bool) {
	if pr.ContentType == "" {
		return "", false
	}
	if openapitools.MediaEncoding(pr.ContentType) == "json" {
		raw, err := json.Marshal(v)
		if err == nil {
			return string(raw), true
		}
	}
	return scalar(v), true
}

// items returns an array's elements; pairs returns an object's keys and
// values, keys sorted. Both render the elements with esc.
func items(v any, esc func(string) string) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = esc(scalar(x))
	}
	return out
}

func pairs(v any, esc func(string) string) ([]string, []string) {
	m, _ := v.(map[string]any)
	keys := openapischema.SortedKeys(m)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = esc(scalar(m[k]))
		keys[i] = esc(k)
	}
	return keys, vals
}

func joinPairs(keys, vals []string, kv, sep string) string {
	parts := make([]string, len(keys))
	for i := range keys {
		parts[i] = keys[i] + kv + vals[i]
	}
	return strings.Join(parts, sep)
}

func flatPairs(keys, vals []string) []string {
	out := make([]string, 0, 2*len(keys))
	for i := range keys {
		out = append(out, keys[i], vals[i])
	}
	return out
}

// pathValue serializes a path parameter: simple (default), label or
// matrix style.
func (pr *param) pathValue(v any, esc func(string) string) string {
	if s, ok := pr.contentValue(v); ok {
		return esc(s)
	}
	kind := valueKind(v, pr.Kind)
	switch pr.Style {
	case "label":
		sep := ","
		if pr.Explode {
			sep = "."
		}
		switch kind {
		case "array":
			return "." + strings.Join(items(v, esc), sep)
		case "object":
			k, vals := pairs(v, esc)
			if pr.Explode {
				return "." + joinPairs(k, vals, "=", ".")
			}
			return "." + strings.Join(flatPairs(k, vals), ",")
		}
		return "." + esc(scalar(v))
	case "matrix":
		name := esc(pr.Name)
		switch kind {
		case "array":
			it := items(v, esc)
			if pr.Explode {
				return ";" + name + "=" + strings.Join(it, ";"+name+"=")
			}
			return ";" + name + "=" + strings.Join(it, ",")
		case "object":
			k, vals := pairs(v, esc)
			if pr.Explode {
				return ";" + joinPairs(k, vals, "=", ";")
			}
			return ";" + name + "=" + strings.Join(flatPairs(k, vals), ",")
		}
		return ";" + name + "=" + esc(scalar(v))
	}
	return simpleValue(v, kind, pr.Explode, esc)
}

func simpleValue(v any, kind string, explode bool, esc func(string) string) string {
	switch kind {
	case "array":
		return strings.Join(items(v, esc), ",")
	case "object":
		k, vals := pairs(v, esc)
		if explode {
			return joinPairs(k, vals, "=", ",")
		}
		return strings.Join(flatPairs(k, vals), ",")
	}
	return esc(scalar(v))
}

// queryPieces serializes a query parameter: form (default),
// spaceDelimited, pipeDelimited or deepObject style.
func (pr *param) queryPieces(v any) []string {
	esc := escapeStrict
	if pr.AllowReserved {
		esc = escapeReserved
	}
	name := escapeStrict(pr.Name)
	if s, ok := pr.contentValue(v); ok {
		return []string{name + "=" + esc(s)}
	}
	kind := valueKind(v, pr.Kind)
	switch kind {
	case "array":
		it := items(v, esc)
		if pr.Explode && pr.Style != "deepObject" {
			out := make([]string, len(it))
			for i, x := range it {
				out[i] = name + "=" + x
			}
			return out
		}
		sep := ","
		switch pr.Style {
		case "spaceDelimited":
			sep = "%20"
		case "pipeDelimited":
			sep = "%7C"
		}
		return []string{name + "=" + strings.Join(it, sep)}
	case "object":
		if pr.Style == "deepObject" {
			return deepObject(name, v, esc)
		}
		k, vals := pairs(v, esc)
		if pr.Explode {
			out := make([]string, len(k))
			for i := range k {
				out[i] = k[i] + "=" + vals[i]
			}
			return out
		}
		return []string{name + "=" + strings.Join(flatPairs(k, vals), ",")}
	}
	return []string{name + "=" + esc(scalar(v))}
}

// deepObject renders name[key]=value, recursing into nested objects.
func deepObject(prefix string, v any, esc func(string) string) []string {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok {
			var out []string
			for _, x := range l {
				out = append(out, prefix+"="+esc(scalar(x)))
			}
			return out
		}
		return []string{prefix + "=" + esc(scalar(v))}
	}
	var out []string
	for _, k := range openapischema.SortedKeys(m) {
		out = append(out, deepObject(prefix+"%5B"+escapeStrict(k)+"%5D", m[k], esc)...)
	}
	return out
}

// headerValue serializes a header parameter (simple style).
func (pr *param) headerValue(v any) string {
	if s, ok := pr.contentValue(v); ok {
		return s
	}
	return simpleValue(v, valueKind(v, pr.Kind), pr.Explode, identity)
}

// cookiePieces serializes a cookie parameter (form style).
func (pr *param) cookiePieces(v any) []string {
	esc := escapeCookie
	if s, ok := pr.contentValue(v); ok {
		return []string{pr.Name + "=" + esc(s)}
	}
	switch valueKind(v, pr.Kind) {
	case "array":
		it := items(v, esc)
		if pr.Explode {
			out := make([]string, len(it))
			for i, x := range it {
				out[i] = pr.Name + "=" + x
			}
			return out
		}
		return []string{pr.Name + "=" + strings.Join(it, ",")}
	case "object":
		k, vals := pairs(v, esc)
		if pr.Explode {
			out := make([]string, len(k))
			for i := range k {
				out[i] = k[i] + "=" + vals[i]
			}
			return out
		}
		return []string{pr.Name + "=" + strings.Join(flatPairs(k, vals), ",")}
	}
	return []string{pr.Name + "=" + esc(scalar(v))}
}

// escapeCookie percent-encodes the bytes a cookie value cannot hold.
func escapeCookie(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// valueKind is the kind of the value given: the schema may allow several.
func valueKind(v any, _ string) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// encode serializes the body by the chosen media type.
func (b *body) encode(r *request, v any) error {
	r.contentType = b.SentType
	switch b.Encoding {
	case "json":
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding the body as JSON: %w", err)
		}
		r.body = raw
	case "form":
		vals := url.Values{}
		formFields(v, func(k, val string) { vals.Add(k, val) })
		r.body = []byte(vals.Encode())
	case "multipart":
		body, contentType, err := multipartBody(v)
		if err != nil {
			return err
		}
		r.body, r.contentType = body, contentType
	default:
		r.body = []byte(scalar(v))
	}
	return nil
}

// multipartBody encodes an object body as multipart/form-data: a text
// part per primitive (repeated for arrays) and, as OpenAPI's default
// encoding for structured properties says, a JSON part (content type
// application/json) per object, or per object item of an array. Keys are
// visited in sorted order.
func multipartBody(v any) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	m, _ := v.(map[string]any)
	for _, k := range openapischema.SortedKeys(m) {
		vals, isList := m[k].([]any)
		if !isList {
			vals = []any{m[k]}
		}
		for _, x := range vals {
			if err := writePart(w, k, x); err != nil {
				return nil, "", fmt.Errorf("encoding the multipart body: %w", err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("encoding the multipart body: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// writePart writes one form field: JSON for an object or a nested array,
// text otherwise; nothing for null.
func writePart(w *multipart.Writer, name string, v any) error {
	switch v.(type) {
	case nil:
		return nil
	case map[string]any, []any:
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+quoteEscaper.Replace(name)+`"`)
		h.Set("Content-Type", "application/json")
		part, err := w.CreatePart(h)
		if err != nil {
			return err
		}
		_, err = part.Write(raw)
		return err
	}
	return w.WriteField(name, scalar(v))
}

// quoteEscaper escapes a form field name as mime/multipart does.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// formFields walks an object body: one field per primitive, repeated for
// arrays, JSON for nested objects. Keys are visited in sorted order.
func formFields(v any, add func(k, v string)) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch x := m[k].(type) {
		case []any:
			for _, e := range x {
				add(k, scalar(e))
			}
		case nil:
		default:
			add(k, scalar(x))
		}
	}
}
