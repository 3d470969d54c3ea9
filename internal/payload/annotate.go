package payload

import "fmt"

// annotations walks the value beside its schema and warns, without making
// the value invalid, about fields the contract marks deprecated and
// write-only fields in a response. (Read-only fields are not in a request
// schema at all: internal/openapischema leaves them out, as they are never sent.)
// Each node visited is a step of g: the schema's alternatives multiply
// the nodes beside a value.
func annotations(g *guard, doc, root, v any, k string) []Diagnostic {
	w := walker{doc: doc}
	var out []Diagnostic
	var walk func(node, v any, at string, depth int)
	walk = func(node, v any, at string, depth int) {
		g.step()
		if depth > maxWalkDepth || len(out) > maxDiagnostics {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for _, name := range sortedKeys(x) {
				kids, _ := w.child(node, name)
				p := joinField(at, name)
				for _, f := range flatFacets(w, kids) {
					switch {
					case f["deprecated"] == true:
						out = append(out, Diagnostic{Field: p, Code: DiagDeprecated, Severity: SeverityWarning, Expected: "omitted",
							Message: fmt.Sprintf("%q is deprecated in the contract: it may stop being accepted", p)})
					case f["writeOnly"] == true && k == KindResponse:
						out = append(out, Diagnostic{Field: p, Code: DiagWriteOnly, Severity: SeverityWarning, Expected: "absent from a response",
							Message: fmt.Sprintf("%q is write-only: a response should not carry it", p)})
					default:
						continue
					}
					break
				}
				for _, kid := range kids {
					walk(kid, x[name], p, depth+1)
				}
			}
		case []any:
			kids, _ := w.child(node, "[]")
			for i, item := range x {
				for _, kid := range kids {
					walk(kid, item, fmt.Sprintf("%s[%d]", at, i), depth+1)
				}
			}
		}
	}
	walk(root, v, "", 0)
	return out
}

func flatFacets(w walker, nodes []any) []map[string]any {
	var out []map[string]any
	for _, n := range nodes {
		out = append(out, w.facets(n)...)
	}
	return out
}
