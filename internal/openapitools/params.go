package openapitools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// Parameter locations, in the order they keep their bare names when two
// parameters share one.
var locations = []string{"path", "query", "header", "cookie"}

// param is one operation parameter and how to serialize it.
type param struct {
	name          string
	in            string
	arg           string // the argument (input property) name
	required      bool
	style         string
	explode       bool
	allowReserved bool
	contentType   string // set when the parameter uses content instead of schema
	kind          string // array, object, or "" for a primitive
	node          map[string]any
	file          string
}

// mergeParams merges path-item and operation parameters: the operation's
// entry wins over the path item's for the same name and location. Header
// names compare case-insensitively. Accept, Content-Type and Authorization
// header parameters are ignored, as OpenAPI says.
func mergeParams(d *openapischema.Document, itemParams, opParams any, file string) []*param {
	var out []*param
	index := map[string]int{}
	for _, list := range []any{itemParams, opParams} {
		l, _ := list.([]any)
		for _, raw := range l {
			node, pfile := d.Deref(file, raw)
			m, _ := node.(map[string]any)
			pr := newParam(m, pfile)
			if pr == nil {
				continue
			}
			key := pr.in + "\x00" + pr.name
			if pr.in == "header" {
				key = pr.in + "\x00" + strings.ToLower(pr.name)
			}
			if i, ok := index[key]; ok {
				out[i] = pr
				continue
			}
			index[key] = len(out)
			out = append(out, pr)
		}
	}
	return out
}

func newParam(m map[string]any, file string) *param {
	name, in := openapischema.StringAt(m, "name"), openapischema.StringAt(m, "in")
	if name == "" || !slices.Contains(locations, in) {
		return nil
	}
	if in == "header" {
		switch strings.ToLower(name) {
		case "accept", "content-type", "authorization":
			return nil
		}
	}
	pr := &param{name: name, in: in, node: m, file: file}
	pr.required, _ = m["required"].(bool)
	if in == "path" {
		pr.required = true
	}
	pr.style = openapischema.StringAt(m, "style")
	if pr.style == "" {
		pr.style = map[string]string{"path": "simple", "query": "form", "header": "simple", "cookie": "form"}[in]
	}
	if ex, ok := m["explode"].(bool); ok {
		pr.explode = ex
	} else {
		pr.explode = pr.style == "form"
	}
	pr.allowReserved, _ = m["allowReserved"].(bool)
	if content, ok := m["content"].(map[string]any); ok && m["schema"] == nil {
		pr.contentType = pickMedia(content)
	}
	return pr
}

// connectionHeaders are the header names a tool's arguments may not set:
// hop-by-hop headers (RFC 9110 §7.6.1, and Proxy-* by convention) and
// those that frame the message or name its target. The HTTP client writes
// them from the request itself; set from an argument they could split,
// smuggle or redirect it.
var connectionHeaders = []string{"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length"}

// checkHeaderParams refuses header parameters named as connection,
// framing or proxy headers: an operation declaring one gets no tool.
func checkHeaderParams(params []*param) error {
	for _, pr := range params {
		name := strings.ToLower(pr.name)
		if pr.in == "header" && (slices.Contains(connectionHeaders, name) || strings.HasPrefix(name, "proxy-")) {
			return fmt.Errorf("header parameter %q is a hop-by-hop or framing header (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Host, Content-Length, Proxy-*), "+
				"which the HTTP client sets from the request itself; a tool cannot send it as an argument — the operation must not declare it as a parameter", pr.name)
		}
	}
	return nil
}

// schemaFor converts the parameter's schema (or its content's schema) and
// adds the parameter's description.
func (pr *param) schemaFor(c *openapischema.Converter) any {
	var raw any = map[string]any{}
	if s, ok := pr.node["schema"]; ok {
		raw = s
	} else if content, ok := pr.node["content"].(map[string]any); ok && pr.contentType != "" {
		mt, _ := content[pr.contentType].(map[string]any)
		if s, ok := mt["schema"]; ok {
			raw = s
		}
	}
	s := c.Schema(raw, pr.file, 0)
	sm, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if desc := openapischema.StringAt(pr.node, "description"); desc != "" && openapischema.StringAt(sm, "description") == "" {
		sm["description"] = desc
	}
	if ex, ok := pr.node["example"]; ok && sm["examples"] == nil {
		sm["examples"] = []any{ex}
	}
	if dep, _ := pr.node["deprecated"].(bool); dep {
		sm["deprecated"] = true
	}
	return sm
}

// assignArgNames gives every parameter its argument name. A name used in
// one location only stays bare. When several locations share a name, the
// first in the order path, query, header, cookie keeps it and the others
// become <location>_<name>. "body" is the request body's when there is one.
func assignArgNames(params []*param, hasBody bool) {
	taken := map[string]bool{}
	if hasBody {
		taken["body"] = true
	}
	var later []*param
	for _, loc := range locations {
		for _, pr := range params {
			if pr.in != loc {
				continue
			}
			if !taken[pr.name] {
				pr.arg = pr.name
				taken[pr.name] = true
				continue
			}
			later = append(later, pr)
		}
	}
	for _, pr := range later {
		base := pr.in + "_" + pr.name
		arg := base
		for i := 2; taken[arg]; i++ {
			arg = fmt.Sprintf("%s_%d", base, i)
		}
		pr.arg = arg
		taken[arg] = true
	}
}

// body is an operation's request body: the media type sent and how.
type body struct {
	contentType string
	encoding    string // json, form, multipart, text
	required    bool
	schema      any
}

// requestBody reads the request body, choosing one media type: JSON first,
// then form, multipart, text, anything else (sent as text).
func requestBody(d *openapischema.Document, node any, file string, c *openapischema.Converter) *body {
	n, bfile := d.Deref(file, node)
	m, _ := n.(map[string]any)
	content, _ := m["content"].(map[string]any)
	if len(content) == 0 {
		return nil
	}
	b := &body{contentType: pickMedia(content)}
	b.required, _ = m["required"].(bool)
	b.encoding = encodingOf(b.contentType)
	mt, _ := content[b.contentType].(map[string]any)
	switch b.encoding {
	case "json", "form", "multipart":
		raw, ok := mt["schema"]
		if !ok {
			raw = map[string]any{}
		}
		b.schema = c.Schema(raw, bfile, 0)
	default:
		b.schema = map[string]any{"type": "string"}
	}
	if sm, ok := b.schema.(map[string]any); ok {
		desc := strings.TrimSpace(openapischema.StringAt(m, "description"))
		if desc != "" && openapischema.StringAt(sm, "description") == "" {
			sm["description"] = desc
		}
		if sm["description"] == nil {
			sm["description"] = "request body, sent as " + b.sentType()
		}
	}
	return b
}

// sentType is the Content-Type sent: JSON for a wildcard media type.
func (b *body) sentType() string {
	switch mediaBase(b.contentType) {
	case "*/*", "application/*":
		return "application/json"
	}
	return b.contentType
}

// pickMedia chooses a media type deterministically, preferring what can be
// serialized faithfully.
func pickMedia(content map[string]any) string {
	keys := openapischema.SortedKeys(content)
	rank := func(mt string) int {
		switch encodingOf(mt) {
		case "json":
			if strings.EqualFold(mediaBase(mt), "application/json") {
				return 0
			}
			return 1
		case "form":
			return 2
		case "multipart":
			return 3
		case "text":
			return 4
		}
		return 5
	}
	slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
	return keys[0]
}

func mediaBase(mt string) string {
	base, _, _ := strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

func encodingOf(mt string) string {
	base := mediaBase(mt)
	switch {
	case base == "application/json" || strings.HasSuffix(base, "+json") || base == "*/*" || base == "application/*":
		return "json"
	case base == "application/x-www-form-urlencoded":
		return "form"
	case base == "multipart/form-data":
		return "multipart"
	case strings.HasPrefix(base, "text/"):
		return "text"
	}
	return "raw"
}

// acceptHeader lists the media types the operation's responses declare,
// JSON first, then anything at low priority.
func acceptHeader(d *openapischema.Document, opNode map[string]any, file string) string {
	responses, _ := opNode["responses"].(map[string]any)
	seen := map[string]bool{}
	var types []string
	for _, code := range openapischema.SortedKeys(responses) {
		n, _ := d.Deref(file, responses[code])
		m, _ := n.(map[string]any)
		content, _ := m["content"].(map[string]any)
		for _, mt := range openapischema.SortedKeys(content) {
			b := mediaBase(mt)
			if b != "" && !seen[b] && !strings.ContainsAny(b, ",\r\n") {
				seen[b] = true
				types = append(types, b)
			}
		}
	}
	slices.SortStableFunc(types, func(a, b string) int {
		ja, jb := encodingOf(a) == "json", encodingOf(b) == "json"
		switch {
		case ja && !jb:
			return -1
		case jb && !ja:
			return 1
		}
		return 0
	})
	if len(types) == 0 {
		return "application/json, */*;q=0.5"
	}
	if !seen["*/*"] {
		types = append(types, "*/*;q=0.1")
	}
	return strings.Join(types, ", ")
}

// kindOf tells arrays and objects from primitives, following a top-level
// $ref into defs.
func kindOf(s any, defs map[string]any) string {
	for range openapischema.MaxRefHops {
		m, ok := s.(map[string]any)
		if !ok {
			return ""
		}
		if ref, ok := m["$ref"].(string); ok && m["type"] == nil {
			s = defs[unescapePointer(strings.TrimPrefix(ref, "#/$defs/"))]
			continue
		}
		if all, ok := m["allOf"].([]any); ok && m["type"] == nil && len(all) > 0 {
			s = all[0]
			continue
		}
		switch t := m["type"].(type) {
		case string:
			if t == "array" || t == "object" {
				return t
			}
			return ""
		case []any:
			for _, k := range []string{"array", "object"} {
				if slices.Contains(t, any(k)) {
					return k
				}
			}
			return ""
		}
		if m["items"] != nil {
			return "array"
		}
		if m["properties"] != nil {
			return "object"
		}
		return ""
	}
	return ""
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
