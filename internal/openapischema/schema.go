package openapischema

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/jsonschemakw"
)

// MaxSchemaDepth bounds the nesting of inline schemas; references do not
// count (they become $defs entries).
const MaxSchemaDepth = 64

// maxToolDefs bounds the definitions one tool's input schema may carry in
// its $defs: each tool definition is sent whole in tools/list, so a request
// body that reaches an API's whole schema graph would repeat it in every
// tool.
const maxToolDefs = 256

// droppedKeywords are OpenAPI-only keywords, and identifiers that would
// change how references resolve once the schema is moved. Which of the
// other keywords hold one schema, a map or a list of them comes from
// internal/jsonschemakw; everything else is copied as a value.
var droppedKeywords = []string{"discriminator", "xml", "externalDocs", "$schema", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary"}

// Converter turns OpenAPI schemas into JSON Schema 2020-12. References are
// moved into one $defs map shared by a tool's whole input schema; a
// reference met again (a cycle included) reuses its entry.
type Converter struct {
	doc  *Document
	defs map[string]any    // $defs key → converted schema
	keys map[string]string // file#fragment → $defs key
	err  error             // the first unresolvable reference
	// base is the file and pointer of the definition being converted: the
	// schema resource a "#/$defs/…" reference inside it may mean.
	base [2]string
}

// resolve follows a schema's $ref and returns its target, the target's
// file and its JSON pointer there. Besides JSON pointers it follows the
// two OpenAPI 3.1 forms a pointer from the document root does not reach:
// "#name", a schema's $anchor, and "#/$defs/…" written inside a component
// schema for that schema's own $defs.
func (c *Converter) resolve(file, ref string) (any, string, string, error) {
	target, tfile, err := c.doc.Resolve(file, ref)
	before, frag, _ := strings.Cut(ref, "#")
	if err == nil {
		return target, tfile, frag, nil
	}
	tfile = file
	if before != "" {
		tfile = path.Join(path.Dir(file), before)
	}
	tree, terr := c.doc.tree(tfile)
	if terr != nil {
		return nil, "", "", err
	}
	switch {
	case frag != "" && !strings.HasPrefix(frag, "/"):
		if p, ok := c.doc.anchor(tfile, tree, frag); ok {
			node, _ := jsonobj.Pointer(tree, p)
			return node, tfile, p, nil
		}
	case strings.HasPrefix(frag, "/$defs/") && c.base[0] == tfile && c.base[1] != "":
		if node, ok := jsonobj.Pointer(tree, c.base[1]+frag); ok {
			return node, tfile, c.base[1] + frag, nil
		}
	}
	return nil, "", "", err
}

// NewConverter returns a converter of schemas of d with no definitions yet.
func NewConverter(d *Document) *Converter {
	return &Converter{doc: d, defs: map[string]any{}, keys: map[string]string{}}
}

// Schema converts the schema node written in file, depth levels of inline
// nesting below the schema the caller started from. A failure is kept
// for Err and the schema converted so far is returned.
func (c *Converter) Schema(node any, file string, depth int) any {
	switch n := node.(type) {
	case bool:
		return n
	case map[string]any:
		if depth > MaxSchemaDepth {
			c.fail(fmt.Errorf("schema nesting is deeper than %d levels", MaxSchemaDepth))
			return map[string]any{}
		}
		if ref, ok := n["$ref"].(string); ok {
			return c.ref(n, ref, file, depth)
		}
		return c.object(n, file, depth)
	default:
		return map[string]any{}
	}
}

// ref converts a $ref into a reference to its $defs entry, converting the
// target the first time it is met.
func (c *Converter) ref(n map[string]any, ref, file string, depth int) any {
	target, tfile, frag, err := c.resolve(file, ref)
	if err != nil {
		c.fail(err)
		return map[string]any{}
	}
	id := tfile + "#" + frag
	key, seen := c.keys[id]
	if !seen {
		if len(c.defs) >= maxToolDefs {
			c.fail(fmt.Errorf("the input schema reaches more than %d definitions through $ref; a tool definition that large is not served", maxToolDefs))
			return map[string]any{}
		}
		key = c.defKey(frag)
		c.keys[id] = key
		c.defs[key] = map[string]any{} // placeholder: a cycle back here ends at the reference
		// A definition's own nesting counts from zero: a long chain of
		// references (common in large APIs) is bounded by the number of
		// definitions, each converted once, not by maxSchemaDepth.
		outer := c.base
		c.base = [2]string{tfile, frag}
		c.defs[key] = c.Schema(target, tfile, 0)
		c.base = outer
	}
	local := "#/$defs/" + escapePointer(key)
	if c.doc.v30 || len(n) == 1 {
		return map[string]any{"$ref": local} // 3.0 ignores keywords next to $ref
	}
	// 3.1: keywords next to $ref apply too.
	out := c.object(withoutKey(n, "$ref"), file, depth)
	out["$ref"] = local
	return out
}

var defKeyUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// defKey picks a readable, unique $defs key: the last segment of the
// reference (Product for #/components/schemas/Product), numbered on clash.
func (c *Converter) defKey(frag string) string {
	segs := strings.Split(frag, "/")
	base := defKeyUnsafe.ReplaceAllString(segs[len(segs)-1], "_")
	if base == "" || base == "_" {
		base = "schema"
	}
	key := base
	for i := 2; ; i++ {
		if _, used := c.defs[key]; !used {
			return key
		}
		key = fmt.Sprintf("%s_%d", base, i)
	}
}

// object converts one schema object that is not a bare reference.
func (c *Converter) object(n map[string]any, file string, depth int) map[string]any {
	out := make(map[string]any, len(n))
	for k, v := range n {
		switch {
		case strings.HasPrefix(k, "x-"), slices.Contains(droppedKeywords, k):
		case jsonschemakw.Lookup(k).Shape == jsonschemakw.One:
			out[k] = c.Schema(v, file, depth+1)
		case jsonschemakw.Lookup(k).Shape == jsonschemakw.Map:
			if m, ok := v.(map[string]any); ok {
				cm := make(map[string]any, len(m))
				for _, name := range SortedKeys(m) {
					if k == "properties" && isReadOnly(m[name]) {
						continue // readOnly properties are never sent
					}
					cm[name] = c.Schema(m[name], file, depth+1)
				}
				out[k] = cm
			}
		case jsonschemakw.Lookup(k).Shape == jsonschemakw.List:
			if l, ok := v.([]any); ok {
				cl := make([]any, len(l))
				for i, s := range l {
					cl[i] = c.Schema(s, file, depth+1)
				}
				out[k] = cl
			}
		default:
			out[k] = v
		}
	}
	if p, ok := out["pattern"].(string); ok {
		if _, err := regexp.Compile(p); err != nil {
			c.fail(fmt.Errorf("pattern %q is not a regular expression: %w", p, err))
		}
	}
	if pp, ok := out["patternProperties"].(map[string]any); ok {
		for p := range pp {
			if _, err := regexp.Compile(p); err != nil {
				c.fail(fmt.Errorf("patternProperties key %q is not a regular expression: %w", p, err))
			}
		}
	}
	if props, ok := n["properties"].(map[string]any); ok {
		if req, ok := out["required"].([]any); ok {
			kept := req[:0:0]
			for _, r := range req {
				if name, ok := r.(string); !ok || !isReadOnly(props[name]) {
					kept = append(kept, r)
				}
			}
			out["required"] = kept
		}
	}
	if c.doc.v30 {
		convert30(out)
	}
	if ex, ok := out["example"]; ok {
		if _, has := out["examples"]; !has {
			out["examples"] = []any{ex}
		}
		delete(out, "example")
	}
	return out
}

// convert30 rewrites the OpenAPI 3.0 keywords whose meaning differs in
// 2020-12: nullable, and boolean exclusive bounds.
func convert30(s map[string]any) {
	if nullable, _ := s["nullable"].(bool); nullable {
		switch t := s["type"].(type) {
		case string:
			s["type"] = []any{t, "null"}
		case []any:
			if !slices.Contains(t, any("null")) {
				s["type"] = append(slices.Clone(t), "null")
			}
		}
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
			s["enum"] = append(slices.Clone(enum), nil)
		}
	}
	delete(s, "nullable")
	for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		ex, ok := s[b[0]].(bool)
		if !ok {
			continue
		}
		delete(s, b[0])
		if bound, has := s[b[1]]; ex && has {
			s[b[0]] = bound
			delete(s, b[1])
		}
	}
}

func isReadOnly(node any) bool {
	m, _ := node.(map[string]any)
	ro, _ := m["readOnly"].(bool)
	return ro
}

// Err is the first failure of a conversion (an unresolvable reference, a
// bound exceeded); nil while every schema converted.
func (c *Converter) Err() error { return c.err }

// Defs are the definitions the converted schemas reference, by $defs key;
// the caller puts them in the enclosing schema's $defs.
func (c *Converter) Defs() map[string]any { return c.defs }

// Origin names a reference to the tool's $defs by the reference it was
// converted from (spec.yaml#/components/schemas/A).
func (c *Converter) Origin(local string) string {
	for id, key := range c.keys {
		if "#/$defs/"+escapePointer(key) == local {
			return id
		}
	}
	return local
}

func (c *Converter) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := maps.Clone(m)
	delete(out, key)
	return out
}

// SortedKeys returns the keys of m in order, nil for an empty m. The
// slice is made once at its length: collecting an iterator grows it a few
// times on the way, which is most of the objects a sort of a response's
// header names costs on every call.
func SortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes one JSON pointer segment.
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
