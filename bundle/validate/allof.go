package validate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/jsonschemakw"
)

// Bounds on the closed-allOf check: branches looked at per allOf, $ref
// hops per branch, nesting followed inside a branch, names listed in one
// finding and findings per spec.
const (
	maxAllOfBranches  = 64
	maxAllOfRefHops   = 32
	maxAllOfNesting   = 8
	maxRefusedNamed   = 5
	maxClosedFindings = 20
)

// nameMap reports a keyword whose value maps names to schemas: the
// JSON Schema ones (internal/jsonschemakw) and OpenAPI's components
// "schemas".
func nameMap(k string) bool {
	return k == "schemas" || jsonschemakw.Lookup(k).Shape == jsonschemakw.Map
}

// warnClosedAllOf warns (ALLOF_CLOSED_SCHEMA) of every allOf in an
// interface spec with a branch closed by additionalProperties: false that
// refuses fields another branch (or the schema beside the allOf)
// declares or requires. additionalProperties sees only its own schema's
// properties, so such a branch refuses them, and no value carrying them
// fits: every product of an "allOf: [NewProduct, {id}]" fails
// validation while the contract reads as if it declared id. doc is the
// spec as the spec check decoded it (not decoded again here); a spec that
// never says allOf is not walked.
func (v *validator) warnClosedAllOf(path, ref string, data []byte, doc map[string]any) {
	if doc == nil || !bytes.Contains(data, []byte("allOf")) {
		return
	}
	remedy := "merge the branches into one schema (this document's schema dialect has no unevaluatedProperties)"
	if s, _ := doc["openapi"].(string); strings.HasPrefix(s, "3.1") {
		remedy = "close the composition at the top instead — unevaluatedProperties: false beside the allOf, with the branches left open — or merge the branches into one schema"
	}
	found := 0
	// names says a map's keys are names (of properties, of schemas), not
	// keywords: a property called "default" is still walked.
	var walk func(node any, ptr string, depth int, names bool)
	walk = func(node any, ptr string, depth int, names bool) {
		if depth > 256 || found > maxClosedFindings {
			return
		}
		switch n := node.(type) {
		case map[string]any:
			if branches, ok := n["allOf"].([]any); ok && len(branches) > 1 {
				if msg := closedAllOf(doc, n, branches); msg != "" {
					found++
					if found > maxClosedFindings {
						v.res.addWarning(path, CodeAllOfClosedSchema, fmt.Sprintf("%s: more allOfs over a closed schema than the %d reported", ref, maxClosedFindings))
						return
					}
					v.res.addWarning(path, CodeAllOfClosedSchema, fmt.Sprintf("%s#%s is an allOf over %s. Remedy: %s", ref, orRoot(ptr), msg, remedy))
				}
			}
			for _, k := range sortedKeys(n) {
				if !names && (jsonschemakw.IsData(k) || strings.HasPrefix(k, "x-")) {
					continue
				}
				walk(n[k], ptr+"/"+escapeToken(k), depth+1, !names && nameMap(k))
			}
		case []any:
			for i, x := range n {
				walk(x, fmt.Sprintf("%s/%d", ptr, i), depth+1, false)
			}
		}
	}
	walk(doc, "", 0, false)
}

// closedAllOf describes the first closed branch of an allOf that refuses
// fields declared elsewhere in it, or returns "".
func closedAllOf(doc, node map[string]any, branches []any) string {
	branches = branches[:min(len(branches), maxAllOfBranches)]
	resolved := make([]map[string]any, len(branches))
	for i, b := range branches {
		resolved[i] = deref(doc, b)
	}
	for i, b := range resolved {
		if b == nil || b["additionalProperties"] != false || b["patternProperties"] != nil {
			continue
		}
		admitted, _ := b["properties"].(map[string]any)
		var refused []string
		add := func(m map[string]any) {
			for _, name := range declaredNames(m) {
				if _, ok := admitted[name]; !ok {
					refused = append(refused, name)
				}
			}
		}
		add(node)
		for j, other := range branches {
			if j != i {
				facets(doc, other, 0, add)
			}
		}
		slices.Sort(refused)
		refused = slices.Compact(refused)
		if len(refused) == 0 {
			continue
		}
		shown := strings.Join(refused[:min(len(refused), maxRefusedNamed)], ", ")
		if len(refused) > maxRefusedNamed {
			shown += fmt.Sprintf(" and %d more", len(refused)-maxRefusedNamed)
		}
		return fmt.Sprintf("%s, which is closed (additionalProperties: false) and so refuses %s, which the rest of the allOf declares: no value can carry them and fit, so every one that does fails validation (pacto_validate_payload, or any strict validator)",
			branchLabel(branches[i], i), shown)
	}
	return ""
}

// declaredNames are the fields a schema object declares or requires.
func declaredNames(m map[string]any) []string {
	props, _ := m["properties"].(map[string]any)
	names := sortedKeys(props)
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
	}
	return names
}

// facets calls f on node, dereferenced, and on what it combines through
// allOf, anyOf and oneOf, bounded.
func facets(doc map[string]any, node any, depth int, f func(map[string]any)) {
	m := deref(doc, node)
	if m == nil || depth > maxAllOfNesting {
		return
	}
	f(m)
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := m[k].([]any)
		for _, x := range list[:min(len(list), maxAllOfBranches)] {
			facets(doc, x, depth+1, f)
		}
	}
}

// deref follows local $refs ("#/...") to a schema object; nil for a
// boolean schema, a reference into another file or one that dangles.
func deref(doc map[string]any, node any) map[string]any {
	for range maxAllOfRefHops {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if !strings.HasPrefix(ref, "#") {
			return nil
		}
		if node, ok = jsonobj.Pointer(doc, ref[1:]); !ok {
			return nil
		}
	}
	return nil
}

// branchLabel names a branch for a finding: the schema it refers to, or
// its place.
func branchLabel(b any, i int) string {
	if m, ok := b.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok {
			return ref
		}
	}
	return fmt.Sprintf("its branch allOf[%d]", i)
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
