package payload

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kubepact/kubepact/internal/jsonobj"
)

// Bounds on walking a schema: how many $ref hops one step follows, how
// deep a walk goes and how many paths a miss compares.
const (
	maxRefHops   = 32
	maxWalkDepth = 12
	maxPaths     = 5000
)

// walker reads schema nodes of one document: $refs inside it are followed
// (a reference to another file is not, and reads as "anything").
type walker struct{ doc any }

// deref follows local $refs.
func (w walker) deref(node any) map[string]any {
	for range maxRefHops {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return m
		}
		target, ok := jsonobj.Pointer(w.doc, ref[1:])
		if !ok {
			return nil
		}
		if len(m) > 1 { // siblings of $ref (2020-12) apply too
			merged := maps.Clone(m)
			delete(merged, "$ref")
			merged["allOf"] = append([]any{target}, anyList(m["allOf"])...)
			return merged
		}
		node = target
	}
	return nil
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// facets are the nodes that describe one value: the node itself and,
// through allOf (always) and anyOf/oneOf (every branch), the nodes it
// combines, each dereferenced; bounded.
func (w walker) facets(node any) []map[string]any {
	var out []map[string]any
	var visit func(n any, depth int)
	visit = func(n any, depth int) {
		m := w.deref(n)
		if m == nil || depth > maxWalkDepth || len(out) > 64 {
			return
		}
		out = append(out, m)
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			for _, b := range anyList(m[k]) {
				visit(b, depth+1)
			}
		}
	}
	visit(node, 0)
	return out
}

// child steps from node to the schemas of one field of it: a property,
// an array item ("[]" or an index), or, when node is an array and seg a
// name, the property of its items. It reports whether any facet requires
// the field.
func (w walker) child(node any, seg string) (kids []any, required bool) {
	facets := w.facets(node)
	if seg == "[]" || isIndex(seg) {
		for _, f := range facets {
			if it, ok := f["items"]; ok {
				kids = append(kids, it)
			}
			if pi := anyList(f["prefixItems"]); len(pi) > 0 && isIndex(seg) {
				if i, _ := strconv.Atoi(seg); i < len(pi) {
					kids = append(kids, pi[i])
				}
			}
		}
		return kids, false
	}
	for _, f := range facets {
		props, _ := f["properties"].(map[string]any)
		if p, ok := props[seg]; ok {
			kids = append(kids, p)
			if slices.Contains(anyList(f["required"]), any(seg)) {
				required = true
			}
		}
	}
	if len(kids) == 0 { // an array of objects: look into its items
		for _, f := range facets {
			if it, ok := f["items"]; ok {
				k, r := w.child(it, seg)
				kids, required = append(kids, k...), required || r
			}
		}
	}
	return kids, required
}

func isIndex(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// splitPath reads a dotted path: a.b, a[0].b, a[].b, a.0.b; a leading
// "$." or "." is ignored.
func splitPath(p string) []string {
	p = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p), "$"), ".")
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i:])
				break
			}
			idx := part[i+1 : i+j]
			if idx == "" || idx == "*" {
				idx = "[]"
			}
			out = append(out, idx)
			part = part[i+j+1:]
		}
	}
	return out
}

// lookup walks path from root; nil when some step has no schema.
func (w walker) lookup(root any, path []string) (nodes []any, required bool) {
	cur := []any{root}
	for _, seg := range path {
		var next []any
		required = false
		for _, n := range cur {
			k, r := w.child(n, seg)
			next = append(next, k...)
			required = required || r
		}
		if len(next) == 0 {
			return nil, false
		}
		cur = next
	}
	return cur, required
}

// paths lists the field paths below root (arrays as name[]), bounded, for
// did-you-mean on a miss.
func (w walker) paths(root any, prefix string, depth int, out *[]string, seen map[string]bool) {
	if depth > 6 || len(*out) >= maxPaths {
		return
	}
	for _, f := range w.facets(root) {
		props, _ := f["properties"].(map[string]any)
		for _, name := range sortedKeys(props) {
			p := joinField(prefix, name)
			if seen[p] {
				continue
			}
			seen[p] = true
			*out = append(*out, p)
			w.paths(props[name], p, depth+1, out, seen)
		}
		if it, ok := f["items"]; ok {
			w.paths(it, prefix+"[]", depth+1, out, seen)
		}
	}
}
