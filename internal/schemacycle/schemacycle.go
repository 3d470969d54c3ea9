// Package schemacycle finds the JSON Schemas that no validator can
// evaluate: a chain of $ref through allOf, anyOf, oneOf, not, if/then/else
// or dependentSchemas that returns to where it started without descending
// into a property or an item (an unguarded cycle), and chains of such
// applicators longer than [MaxChain].
//
// A validator follows such a chain on the same instance value. A cycle
// never ends: JSON Schema validators written as recursion (the one the MCP
// SDK uses among them) overflow the goroutine stack, which Go cannot
// recover from, and the whole process exits. Recursion that descends — a
// tree whose nodes hold child nodes under properties or items — consumes
// the instance on every round and ends with it; it is allowed.
//
// The check works on a decoded JSON or YAML tree (map[string]any, []any
// and scalars) and follows local references ("#/…") only. It is run where
// schemas are loaded: bundle/validate reports a finding, internal/openapitools
// withholds the operation. It is a JSON-Schema helper, not part of the Pacto
// format; which keywords apply in place comes from internal/jsonschemakw,
// and it imports nothing else of kubepact but internal/jsonobj.
package schemacycle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/jsonschemakw"
)

// MaxChain bounds how many schemas may apply, one inside the other, to the
// same instance value (through $ref and the applicators above). Real
// schemas stay under ten; the bound keeps validation's recursion, which is
// this chain times the instance's nesting, far from the stack limit.
const MaxChain = 64

// Error is an unevaluable schema. Refs are the local references of the
// chain, in order; for a cycle the first and the last are the same.
type Error struct {
	Refs    []string
	TooDeep bool // the chain is longer than MaxChain (no cycle found)
}

func (e *Error) Error() string { return e.Describe(nil) }

// Describe explains the problem, naming each reference through name (nil
// keeps them as written).
func (e *Error) Describe(name func(string) string) string {
	refs := make([]string, len(e.Refs))
	for i, r := range e.Refs {
		if name != nil {
			r = name(r)
		}
		refs[i] = r
	}
	if e.TooDeep {
		msg := fmt.Sprintf("more than %d schemas apply one inside the other to the same value (through $ref, allOf, anyOf, oneOf, not, if/then/else)", MaxChain)
		if len(refs) > 0 {
			msg += " along " + strings.Join(refs, " → ")
		}
		return msg
	}
	return "the $ref cycle " + strings.Join(refs, " → ") +
		" returns to itself through allOf, anyOf, oneOf, not or if/then/else without descending into a property or an item, so no validator can evaluate it; recursion must pass through properties, items or additionalProperties"
}

// Check returns an *Error when the schemas in doc hold an unguarded cycle
// or a chain longer than MaxChain, else nil. doc is walked whole: the root
// and every map inside it are taken as schemas (so an OpenAPI document, a
// tool input schema with $defs, or a bare schema can be given), except
// values that are data, not schemas (enum, const, default, examples,
// example, and x- extensions).
func Check(doc any) error {
	w := &walker{doc: doc, state: map[string]int{}}
	w.queue = append(w.queue, doc)
	for len(w.queue) > 0 && w.err == nil {
		n := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		w.chain(n, 0)
	}
	if w.err != nil {
		return w.err
	}
	return nil
}

// refEntered marks a reference whose chain is being walked; a state above
// it is the finished chain length plus one.
const refEntered = -1

type walker struct {
	doc   any
	state map[string]int // local reference → refEntered, or chain length + 1
	stack []string       // references entered on the current chain
	queue []any          // schemas under a guarded keyword, to walk as new chains
	err   *Error
}

// chain walks the schema n, applied at the given level of the current
// chain, and returns the length of the longest chain that starts at n.
// Guarded subschemas are queued, not walked, so the recursion is bounded
// by MaxChain.
func (w *walker) chain(n any, level int) int {
	if w.err != nil {
		return 0
	}
	if level > MaxChain {
		w.err = &Error{Refs: slices.Clone(w.stack), TooDeep: true}
		return 0
	}
	m, ok := n.(map[string]any)
	if !ok {
		if l, ok := n.([]any); ok { // not a schema, but may hold some
			w.guard(l)
		}
		return 1
	}
	longest := 0
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		d := 0
		kw := jsonschemakw.Lookup(k)
		switch {
		case jsonschemakw.IsData(k), strings.HasPrefix(k, "x-"):
		case k == "$ref":
			if s, ok := v.(string); ok {
				d = w.ref(s, level)
			}
		case kw.InPlace && kw.Shape == jsonschemakw.List:
			l, ok := v.([]any)
			if !ok {
				w.guard(v)
				break
			}
			for _, s := range l {
				d = max(d, w.chain(s, level+1))
			}
		case kw.InPlace && kw.Shape == jsonschemakw.One:
			d = w.chain(v, level+1)
		case kw.InPlace && kw.Shape == jsonschemakw.Map:
			if sm, ok := v.(map[string]any); ok {
				for _, name := range slices.Sorted(maps.Keys(sm)) {
					d = max(d, w.chain(sm[name], level+1))
				}
			}
		case kw.Shape == jsonschemakw.Map:
			// Schemas that apply to members, or ($defs) to nothing by
			// themselves: each starts a chain of its own.
			if sm, ok := v.(map[string]any); ok {
				for _, name := range slices.Sorted(maps.Keys(sm)) {
					w.guard(sm[name])
				}
			}
		default:
			w.guard(v)
		}
		longest = max(longest, d)
	}
	return longest + 1
}

// guard queues the schemas in v (a map, or a list of them) to be walked as
// chains of their own.
func (w *walker) guard(v any) {
	switch t := v.(type) {
	case map[string]any:
		w.queue = append(w.queue, t)
	case []any:
		for i := len(t) - 1; i >= 0; i-- {
			if _, ok := t[i].(map[string]any); ok {
				w.queue = append(w.queue, t[i])
			} else if _, ok := t[i].([]any); ok {
				w.queue = append(w.queue, t[i])
			}
		}
	}
}

// ref follows a local reference applied at level.
func (w *walker) ref(ref string, level int) int {
	if !strings.HasPrefix(ref, "#") {
		return 0 // another document: not followed here
	}
	switch st := w.state[ref]; {
	case st == refEntered:
		at := slices.Index(w.stack, ref)
		w.err = &Error{Refs: append(slices.Clone(w.stack[at:]), ref)}
		return 0
	case st > 0:
		if level+st-1 > MaxChain {
			w.err = &Error{Refs: append(slices.Clone(w.stack), ref), TooDeep: true}
		}
		return st - 1
	}
	target, ok := jsonobj.Pointer(w.doc, ref[1:])
	if !ok {
		return 0 // unresolvable: reported by whoever resolves it
	}
	w.state[ref] = refEntered
	w.stack = append(w.stack, ref)
	d := w.chain(target, level+1)
	w.stack = w.stack[:len(w.stack)-1]
	w.state[ref] = d + 1
	return d
}
