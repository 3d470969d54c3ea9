package diff

import (
	"maps"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/bundle/contract"
)

// maxRefHops bounds how many $refs resolving one parameter or schema may
// follow: a cycle, or a chain built to burn time, stops there.
const maxRefHops = 16

// openapiTree decodes an OpenAPI document; nil when it is not a mapping.
func openapiTree(raw []byte) (map[string]any, error) {
	tree, err := contract.DecodeGeneric(raw)
	if err != nil {
		return nil, err
	}
	doc, _ := tree.(map[string]any)
	return doc, nil
}

// opsOf lists "METHOD /path" for every operation of a decoded document,
// sorted, and maps each to its operation and path item.
func opsOf(doc map[string]any) ([]string, map[string][2]map[string]any) {
	paths, _ := doc["paths"].(map[string]any)
	var ops []string
	at := map[string][2]map[string]any{}
	for path, raw := range paths {
		item, _ := resolveRef(doc, raw).(map[string]any)
		for method, op := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				k := strings.ToUpper(method) + " " + path
				ops = append(ops, k)
				o, _ := op.(map[string]any)
				at[k] = [2]map[string]any{o, item}
			}
		}
	}
	slices.Sort(ops)
	return ops, at
}

// resolveRef follows a local $ref ("#/components/...") up to maxRefHops
// times; anything else, or a ref that does not resolve, is returned as is
// (an external ref is not read: the diff stays within the file).
func resolveRef(doc map[string]any, v any) any {
	for range maxRefHops {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return v
		}
		var cur any = doc
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			cm, ok := cur.(map[string]any)
			if !ok {
				return v
			}
			if cur, ok = cm[tok]; !ok {
				return v
			}
		}
		v = cur
	}
	return v
}

// params are an operation's parameters by "in.name", each true when
// required: the path item's parameters, overridden by the operation's
// own with the same location and name.
func params(doc, op, item map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, src := range []map[string]any{item, op} {
		list, _ := src["parameters"].([]any)
		for _, raw := range list {
			p, _ := resolveRef(doc, raw).(map[string]any)
			name, _ := p["name"].(string)
			in, _ := p["in"].(string)
			if name == "" || in == "" {
				continue
			}
			req, _ := p["required"].(bool)
			out[in+"."+name] = req || in == "path"
		}
	}
	return out
}

// body is what the diff reads of a request body: whether it is required,
// and per media type the properties its schema requires.
type body struct {
	present, required bool
	props             map[string][]string // media type -> required properties, sorted
}

func bodyOf(doc, op map[string]any) body {
	rb, ok := resolveRef(doc, op["requestBody"]).(map[string]any)
	if !ok {
		return body{}
	}
	b := body{present: true, props: map[string][]string{}}
	b.required, _ = rb["required"].(bool)
	content, _ := rb["content"].(map[string]any)
	for mt, raw := range content {
		m, _ := raw.(map[string]any)
		b.props[mt] = requiredProps(doc, m["schema"])
	}
	return b
}

// requiredProps are the properties a schema requires, with its allOf
// branches' (a composed body requires what each branch requires).
func requiredProps(doc map[string]any, schema any) []string {
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		s, ok := resolveRef(doc, v).(map[string]any)
		if !ok || depth > maxRefHops {
			return
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if name, ok := r.(string); ok {
				out = append(out, name)
			}
		}
		all, _ := s["allOf"].([]any)
		for _, br := range all {
			walk(br, depth+1)
		}
	}
	walk(schema, 0)
	slices.Sort(out)
	return slices.Compact(out)
}

// operations diffs the operations both documents have: their parameters
// (the path item's included) and their request bodies. A new required
// parameter, a parameter going from optional to required, a body that
// becomes required and a body property that becomes required are
// BREAKING: a consumer's existing call no longer satisfies them.
func (d *differ) operations(p string, odoc, ndoc map[string]any, oat, nat map[string][2]map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(nat)) {
		o, ok := oat[k]
		if !ok {
			continue
		}
		n := nat[k]
		op := p + ".operations." + k
		oprm, nprm := params(odoc, o[0], o[1]), params(ndoc, n[0], n[1])
		for _, name := range slices.Sorted(maps.Keys(nprm)) {
			oreq, had := oprm[name]
			nreq := nprm[name]
			switch {
			case !had && nreq:
				d.add(op+".parameters."+name, "added", Breaking, k+": required parameter "+name+" is added: existing calls do not send it", "", "required")
			case !had:
				d.add(op+".parameters."+name, "added", NonBreaking, k+": optional parameter "+name+" is added", "", "optional")
			case !oreq && nreq:
				d.add(op+".parameters."+name+".required", "changed", Breaking, k+": parameter "+name+" goes from optional to required: calls that leave it out fail", "false", "true")
			case oreq && !nreq:
				d.add(op+".parameters."+name+".required", "changed", NonBreaking, k+": parameter "+name+" becomes optional", "true", "false")
			}
		}
		for _, name := range slices.Sorted(maps.Keys(oprm)) {
			if _, kept := nprm[name]; !kept {
				d.add(op+".parameters."+name, "removed", PotentiallyBreaking, k+": parameter "+name+" is removed: calls that send it may be refused or lose its effect", name, "")
			}
		}
		d.body(op, k, bodyOf(odoc, o[0]), bodyOf(ndoc, n[0]))
	}
}

func (d *differ) body(op, k string, o, n body) {
	rb := op + ".requestBody"
	switch {
	case !o.present && n.present && n.required:
		d.add(rb, "added", Breaking, k+": a required request body is added: existing calls send none", "", "required")
		return
	case !o.present && n.present:
		d.add(rb, "added", NonBreaking, k+": an optional request body is added", "", "optional")
		return
	case o.present && !n.present:
		d.add(rb, "removed", PotentiallyBreaking, k+": the request body is removed: calls that send one may be refused", "", "")
		return
	case !o.present:
		return
	}
	if !o.required && n.required {
		d.add(rb+".required", "changed", Breaking, k+": the request body goes from optional to required", "false", "true")
	}
	for _, mt := range slices.Sorted(maps.Keys(n.props)) {
		old, ok := o.props[mt]
		if !ok {
			continue // a new media type: the old calls used another
		}
		for _, prop := range n.props[mt] {
			if !slices.Contains(old, prop) {
				d.add(rb+"."+mt+".required."+prop, "added", Breaking, k+": body property "+prop+" ("+mt+") becomes required: calls that leave it out fail", "", prop)
			}
		}
		for _, prop := range old {
			if !slices.Contains(n.props[mt], prop) {
				d.add(rb+"."+mt+".required."+prop, "removed", NonBreaking, k+": body property "+prop+" ("+mt+") is no longer required", prop, "")
			}
		}
	}
}
