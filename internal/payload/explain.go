package payload

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubepact/kubepact/internal/didyoumean"
)

// maxDefinitions bounds the places one explanation lists.
const maxDefinitions = 50

// FieldQuery names a field by dotted path (price.currency,
// lines[].quantity) and, optionally, where to look: the subject fields
// narrow the search as in Subject; with none, every operation's
// parameters, request body and responses, every message and every
// configuration is searched.
type FieldQuery struct {
	Path string
	Subject
}

// Explanation is what a field means at every place the contract defines
// it. A miss is Found false with the reason and did-you-mean candidates.
type Explanation struct {
	Found       bool         `json:"found"`
	Path        string       `json:"path"`
	Definitions []Definition `json:"definitions"`
	// Operations lists the operations that use the field, once each.
	Operations []string `json:"operations,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
}

// Definition is the field at one place.
type Definition struct {
	Where Resolved `json:"where"`
	Field
}

// Field is what a schema says about one field.
type Field struct {
	Type        string         `json:"type,omitempty"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required"`
	Default     any            `json:"default,omitempty"`
	Examples    []any          `json:"examples,omitempty"`
	Enum        []any          `json:"enum,omitempty"`
	Const       any            `json:"const,omitempty"`
	Format      string         `json:"format,omitempty"`
	Pattern     string         `json:"pattern,omitempty"`
	Constraints map[string]any `json:"constraints,omitempty"`
	Deprecated  bool           `json:"deprecated,omitempty"`
	ReadOnly    bool           `json:"readOnly,omitempty"`
	WriteOnly   bool           `json:"writeOnly,omitempty"`
	// Fields are the names of an object's own fields (bounded).
	Fields []string `json:"fields,omitempty"`
	// Value is what the contract's own configuration values set the field
	// to (configurations only); Set says whether they set it at all.
	Value any   `json:"value,omitempty"`
	Set   *bool `json:"set,omitempty"`
}

// constraintKeys are the keywords reported under Constraints.
var constraintKeys = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
	"minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "contentMediaType", "contentEncoding"}

// scope is one schema to search: where it is, its document and root node.
type scope struct {
	where Resolved
	doc   any
	root  any
	cfg   *configuration
}

// Explain answers what the field at q.Path means; ctx bounds the
// schema work a narrowing subject needs. An *Error only when
// the narrowing subject does not exist or q is malformed.
func (c *Contract) Explain(ctx context.Context, q FieldQuery) (*Explanation, error) {
	segs := splitPath(q.Path)
	if len(segs) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Field: "Path", Message: "give the field as a dotted path, e.g. price.currency or lines[].quantity"}
	}
	scopes, err := c.scopes(ctx, q.Subject)
	if err != nil {
		return nil, err
	}
	out := &Explanation{Path: q.Path, Definitions: []Definition{}}
	var all []string
	seen := map[string]bool{}
	for _, s := range scopes {
		w := walker{doc: s.doc}
		nodes, required := w.lookup(s.root, segs)
		if nodes == nil {
			if len(all) < maxPaths {
				w.paths(s.root, "", 0, &all, seen)
			}
			continue
		}
		if len(out.Definitions) == maxDefinitions {
			out.Truncated = true
			break
		}
		f := describeField(w, nodes)
		f.Required = required
		if s.cfg != nil {
			v, ok := lookupValue(s.cfg.values, segs)
			f.Set = &ok
			if ok {
				f.Value = v
			}
		}
		out.Definitions = append(out.Definitions, Definition{Where: s.where, Field: f})
		if s.where.Operation != "" && !slices.Contains(out.Operations, s.where.Operation) {
			out.Operations = append(out.Operations, s.where.Operation)
		}
	}
	out.Found = len(out.Definitions) > 0
	if !out.Found {
		out.Reason = fmt.Sprintf("no %s of service %s defines a field %q", scopeNoun(q.Subject), c.Service, q.Path)
		problems := slices.Clone(c.problems)
		for _, m := range c.messages {
			if m.problem != "" && (q.Message == "" || q.Message == m.name) && q.Operation == "" && q.Configuration == "" {
				problems = append(problems, fmt.Sprintf("message %s: %s", m.name, m.problem))
			}
		}
		for _, cfg := range c.configs {
			if cfg.problem != "" && (q.Configuration == "" || q.Configuration == cfg.name) && q.Operation == "" && q.Message == "" {
				problems = append(problems, fmt.Sprintf("configuration %s: %s", cfg.name, cfg.problem))
			}
		}
		if len(problems) > 0 {
			out.Reason += "; not searched: " + strings.Join(problems, "; ")
		}
		out.Candidates = candidates(q.Path, all)
	}
	return out, nil
}

func scopeNoun(s Subject) string {
	switch {
	case s.Operation != "":
		return "part of operation " + s.Operation
	case s.Message != "":
		return "payload of message " + s.Message
	case s.Configuration != "":
		return "schema of configuration " + s.Configuration
	case s.Kind != "":
		return s.Kind + " schema"
	}
	return "schema"
}

// scopes lists the schemas a query searches.
func (c *Contract) scopes(ctx context.Context, sub Subject) ([]scope, error) {
	if sub.Kind != "" && !slices.Contains(Kinds(), sub.Kind) {
		return nil, &Error{Code: CodeInvalidArgument, Field: "Kind", Accepted: Kinds(), DidYouMean: didyoumean.Nearest(sub.Kind, Kinds()),
			Message: fmt.Sprintf("kind %q is not one of %s", sub.Kind, strings.Join(Kinds(), ", "))}
	}
	want := func(k string) bool { return sub.Kind == "" || sub.Kind == k }
	var out []scope
	if sub.Message == "" && sub.Configuration == "" && (want(KindRequestBody) || want(KindParameters) || want(KindResponse)) {
		ops := c.operations
		if sub.Operation != "" {
			op, err := c.operation(sub.Operation)
			if err != nil {
				return nil, err
			}
			ops = ops[slices.Index(ops, op):][:1]
		}
		for _, op := range ops {
			base := Resolved{Operation: opName(op), Method: op.Method, Path: op.Path, Interface: op.Interface}
			trees := c.trees[op]
			add := func(k string, tree any, status, media string) {
				if tree == nil || !want(k) || (sub.Status != "" && k != KindResponse) {
					return
				}
				where := base
				where.Kind, where.Status, where.MediaType = k, status, media
				out = append(out, scope{where: where, doc: tree, root: tree})
			}
			add(KindParameters, trees.params, "", "")
			add(KindRequestBody, trees.body, "", op.BodyType)
			for i, r := range op.Responses {
				if sub.Status != "" && !strings.EqualFold(r.Status, sub.Status) && !strings.EqualFold(r.Status, rangeOf(sub.Status)) {
					continue
				}
				add(KindResponse, trees.responses[i], r.Status, r.MediaType)
			}
		}
	}
	if sub.Operation == "" && sub.Configuration == "" && want(KindMessage) {
		found := false
		for _, m := range c.messages {
			if sub.Message != "" && m.name != sub.Message && m.title != sub.Message && m.channel != sub.Message && m.operation != sub.Message {
				continue
			}
			found = true
			if m.problem == "" {
				out = append(out, scope{where: Resolved{Kind: KindMessage, Message: m.name, Channel: m.channel, Interface: m.iface}, doc: m.doc, root: m.payload})
			}
		}
		if sub.Message != "" && !found {
			// A miss: resolve only writes its answer, nothing is compiled.
			_, _, err := c.resolveMessage(ctx, sub.Message)
			return nil, err
		}
	}
	if sub.Operation == "" && sub.Message == "" && want(KindConfiguration) {
		found := false
		for _, cfg := range c.configs {
			if sub.Configuration != "" && cfg.name != sub.Configuration {
				continue
			}
			found = true
			if cfg.problem == "" {
				out = append(out, scope{where: Resolved{Kind: KindConfiguration, Configuration: cfg.name}, doc: cfg.doc, root: cfg.doc, cfg: cfg})
			}
		}
		if sub.Configuration != "" && !found {
			_, _, err := c.resolveConfiguration(ctx, sub.Configuration)
			return nil, err
		}
	}
	return out, nil
}

// describeField merges what the nodes (and the nodes they combine) say;
// the first to say something wins.
func describeField(w walker, nodes []any) Field {
	var f Field
	var types []string
	fields := map[string]bool{}
	for _, m := range flatFacets(w, nodes) {
		switch t := m["type"].(type) {
		case string:
			types = append(types, t)
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					types = append(types, s)
				}
			}
		}
		setStr(&f.Title, m["title"])
		setStr(&f.Description, m["description"])
		setStr(&f.Format, m["format"])
		setStr(&f.Pattern, m["pattern"])
		if v, ok := m["default"]; ok && f.Default == nil {
			f.Default = v
		}
		if v, ok := m["const"]; ok && f.Const == nil {
			f.Const = v
		}
		if ex := anyList(m["examples"]); len(ex) > 0 && f.Examples == nil {
			f.Examples = ex
		} else if v, ok := m["example"]; ok && f.Examples == nil {
			f.Examples = []any{v}
		}
		if e := anyList(m["enum"]); len(e) > 0 && f.Enum == nil {
			f.Enum = e
		}
		for _, k := range constraintKeys {
			if v, ok := m[k]; ok {
				if f.Constraints == nil {
					f.Constraints = map[string]any{}
				}
				if _, set := f.Constraints[k]; !set {
					f.Constraints[k] = v
				}
			}
		}
		f.Deprecated = f.Deprecated || m["deprecated"] == true
		f.ReadOnly = f.ReadOnly || m["readOnly"] == true
		f.WriteOnly = f.WriteOnly || m["writeOnly"] == true
		if props, ok := m["properties"].(map[string]any); ok {
			for k := range props {
				fields[k] = true
			}
		}
	}
	slices.Sort(types)
	f.Type = strings.Join(slices.Compact(types), " or ")
	if len(fields) > 0 {
		f.Fields = sortedKeys(fields)
	}
	if len(f.Fields) > maxAccepted {
		f.Fields = f.Fields[:maxAccepted]
	}
	return f
}

func setStr(dst *string, v any) {
	if s, ok := v.(string); ok && *dst == "" {
		*dst = strings.TrimSpace(s)
	}
}

// lookupValue reads a configuration value by path.
func lookupValue(values map[string]any, segs []string) (any, bool) {
	var cur any = values
	for _, s := range segs {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[s]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if !isIndex(s) {
				return nil, false
			}
			i, _ := strconv.Atoi(s)
			if i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// ConfigValue reports whether the contract's values of configuration cfg
// (empty: any configuration) set the field at path, and to what.
func (c *Contract) ConfigValue(cfg, path string) (any, bool) {
	segs := splitPath(path)
	for _, x := range c.configs {
		if cfg != "" && x.name != cfg {
			continue
		}
		if v, ok := lookupValue(x.values, segs); ok {
			return v, true
		}
	}
	return nil, false
}

// candidates are the nearest known paths to a missed one: the
// did-you-mean pick, then paths ending in the same field name.
func candidates(p string, all []string) []string {
	var out []string
	if n := didyoumean.Nearest(p, all); n != "" {
		out = append(out, n)
	}
	segs := splitPath(p)
	last := segs[len(segs)-1]
	for _, a := range all {
		if len(out) == 5 {
			break
		}
		if (a == last || strings.HasSuffix(a, "."+last)) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}
