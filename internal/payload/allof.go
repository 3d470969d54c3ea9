package payload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/kubepact/kubepact/internal/jsonobj"
)

// closedBranches rewrites the UNKNOWN_FIELD diagnostics that would claim
// a field is undeclared when the contract does declare it: in an allOf, a
// branch closed with additionalProperties: false refuses every field the
// other branches declare, so such a field is not unknown — the contract
// contradicts itself there, and the diagnostic says which branch is
// closed. The schema nodes are read from the compiled document's tree;
// a branch in another file is not followed and keeps the plain message.
func closedBranches(ve *jsonschema.ValidationError, inst any, cs *compiledAt, diags []Diagnostic) []Diagnostic {
	if cs == nil || cs.schema == nil {
		return diags
	}
	resource, _, _ := strings.Cut(cs.schema.Location, "#")
	w := walker{doc: cs.tree}
	declared := map[string][]string{} // allOf pointer + "\x00" + branch → names the other branches declare
	var walk func(e *jsonschema.ValidationError, allOfs []*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError, allOfs []*jsonschema.ValidationError) {
		switch k := e.ErrorKind.(type) {
		case *kind.AllOf:
			allOfs = append(allOfs, e)
		case *kind.AdditionalProperties:
			a := innermostAt(allOfs, e)
			if a == nil {
				break
			}
			ptr, branch, ok := branchOf(resource, a, e)
			if !ok {
				break
			}
			key := ptr + "\x00" + strconv.Itoa(branch)
			others, seen := declared[key]
			if !seen {
				others = w.declaredBesides(ptr, branch)
				declared[key] = others
			}
			at := jsonobj.InstancePath(inst, e.InstanceLocation)
			closed := w.branchName(ptr, branch)
			for _, name := range k.Properties {
				if !slices.Contains(others, name) {
					continue
				}
				field := joinField(at, name)
				for i := range diags {
					if d := &diags[i]; d.Field == field && d.Code == DiagUnknown {
						d.Expected = "a field " + closed + " admits"
						d.Message = fmt.Sprintf("%q is declared by another branch of an allOf, but %s, one of its branches, is closed (additionalProperties: false) and does not admit it: no value can carry %q and fit the contract, which contradicts itself here (pacto_check warns of it: ALLOF_CLOSED_SCHEMA)", field, closed, name)
					}
				}
			}
		}
		for _, c := range e.Causes {
			walk(c, allOfs)
		}
	}
	walk(ve, nil)
	return slices.CompactFunc(diags, func(a, b Diagnostic) bool { return a.Field == b.Field && a.Code == b.Code && a.Message == b.Message })
}

// innermostAt is the innermost allOf failure about the same value as e.
func innermostAt(allOfs []*jsonschema.ValidationError, e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for i := len(allOfs) - 1; i >= 0; i-- {
		if slices.Equal(allOfs[i].InstanceLocation, e.InstanceLocation) {
			return allOfs[i]
		}
	}
	return nil
}

// branchOf finds the allOf's pointer in the document and the index of
// its branch that e failed in: the direct cause of a on the way to e.
func branchOf(resource string, a, e *jsonschema.ValidationError) (string, int, bool) {
	res, ptr, _ := strings.Cut(a.SchemaURL, "#")
	if res != resource {
		return "", 0, false
	}
	prefix := a.SchemaURL + "/allOf/"
	for _, c := range a.Causes {
		if !reaches(c, e) {
			continue
		}
		idx, ok := strings.CutPrefix(c.SchemaURL, prefix)
		if !ok {
			return "", 0, false
		}
		i, err := strconv.Atoi(idx)
		return ptr, i, err == nil
	}
	return "", 0, false
}

// reaches reports whether e is c or below it.
func reaches(c, e *jsonschema.ValidationError) bool {
	if c == e {
		return true
	}
	for _, x := range c.Causes {
		if reaches(x, e) {
			return true
		}
	}
	return false
}

// declaredBesides lists the fields that the allOf at ptr declares outside
// its branch-th branch: in the other branches (and what they combine),
// and beside the allOf itself.
func (w walker) declaredBesides(ptr string, branch int) []string {
	node, _ := jsonobj.Pointer(w.doc, ptr)
	m, _ := node.(map[string]any)
	var out []string
	collect := func(f map[string]any) {
		props, _ := f["properties"].(map[string]any)
		out = append(out, sortedKeys(props)...)
		for _, r := range anyList(f["required"]) {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
	}
	collect(m)
	for i, b := range anyList(m["allOf"]) {
		if i == branch {
			continue
		}
		for _, f := range w.facets(b) {
			collect(f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// branchName names the branch-th branch of the allOf at ptr for a
// message: the schema it refers to ("NewProduct"), else its position.
func (w walker) branchName(ptr string, branch int) string {
	node, _ := jsonobj.Pointer(w.doc, ptr)
	m, _ := node.(map[string]any)
	if bs := anyList(m["allOf"]); branch < len(bs) {
		if b, ok := bs[branch].(map[string]any); ok {
			if ref, ok := b["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
				name := ref[strings.LastIndexByte(ref, '/')+1:]
				return strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
			}
		}
	}
	return fmt.Sprintf("branch %d of the allOf", branch+1)
}
