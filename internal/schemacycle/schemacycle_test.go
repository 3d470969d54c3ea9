package schemacycle_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/kubepact/kubepact/internal/schemacycle"
)

func decode(t *testing.T, src string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string // the cycle's refs; nil: no error
	}{
		{name: "issue reproducer: anyOf and allOf back to the start",
			doc:  "components: {schemas: {A: {anyOf: [{$ref: '#/components/schemas/B'}, {type: string}]}, B: {allOf: [{$ref: '#/components/schemas/A'}]}}}",
			want: []string{"#/components/schemas/A", "#/components/schemas/B", "#/components/schemas/A"}},
		{name: "a reference to itself",
			doc:  "$defs: {A: {$ref: '#/$defs/A'}}",
			want: []string{"#/$defs/A", "#/$defs/A"}},
		{name: "through not, then and dependentSchemas",
			doc:  "$defs: {A: {not: {$ref: '#/$defs/B'}}, B: {if: {type: object}, then: {$ref: '#/$defs/C'}}, C: {dependentSchemas: {x: {$ref: '#/$defs/A'}}}}",
			want: []string{"#/$defs/A", "#/$defs/B", "#/$defs/C", "#/$defs/A"}},
		{name: "from a property, into a cycle",
			doc:  "type: object\nproperties: {q: {$ref: '#/$defs/A'}}\n$defs: {A: {oneOf: [{$ref: '#/$defs/A'}]}}",
			want: []string{"#/$defs/A", "#/$defs/A"}},
		{name: "escaped pointer segments",
			doc:  "$defs: {'a/b~c': {allOf: [{$ref: '#/$defs/a~1b~0c'}]}}",
			want: []string{"#/$defs/a~1b~0c", "#/$defs/a~1b~0c"}},
		{name: "a tree of nodes descends through properties",
			doc: "components: {schemas: {Node: {type: object, properties: {children: {type: array, items: {$ref: '#/components/schemas/Node'}}, parent: {$ref: '#/components/schemas/Node'}}}}}"},
		{name: "recursion through additionalProperties and allOf",
			doc: "$defs: {A: {allOf: [{$ref: '#/$defs/B'}]}, B: {additionalProperties: {$ref: '#/$defs/A'}}}"},
		{name: "a diamond is not a cycle",
			doc: "$defs: {A: {allOf: [{$ref: '#/$defs/B'}, {$ref: '#/$defs/C'}]}, B: {$ref: '#/$defs/D'}, C: {$ref: '#/$defs/D'}, D: {type: string}}"},
		{name: "references in data are not followed",
			doc: "$defs: {A: {enum: [{$ref: '#/$defs/A'}], default: {$ref: '#/$defs/A'}, x-note: {$ref: '#/$defs/A'}}}"},
		{name: "unresolvable and external references are left to the resolver",
			doc: "$defs: {A: {allOf: [{$ref: '#/$defs/missing'}, {$ref: 'other.yaml#/A'}]}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := schemacycle.Check(decode(t, tc.doc))
			var se *schemacycle.Error
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Check: %v, want nil", err)
			case tc.want == nil:
				return
			case !errors.As(err, &se):
				t.Fatalf("Check: %v, want a cycle %v", err, tc.want)
			}
			if se.TooDeep {
				t.Errorf("TooDeep set for a cycle")
			}
			if diff := cmp.Diff(se.Refs, tc.want); diff != "" {
				t.Errorf("cycle (-got +want):\n%s", diff)
			}
			if !strings.Contains(err.Error(), "without descending into a property or an item") {
				t.Errorf("message does not say what is wrong: %s", err)
			}
		})
	}
}

func TestCheckDepth(t *testing.T) {
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString("$defs:\n")
		for i := range n {
			fmt.Fprintf(&b, "  S%d: {allOf: [{$ref: '#/$defs/S%d'}]}\n", i, i+1)
		}
		fmt.Fprintf(&b, "  S%d: {type: string}\n", n)
		return b.String()
	}
	if err := schemacycle.Check(decode(t, chain(schemacycle.MaxChain/4))); err != nil {
		t.Fatalf("a chain of %d: %v", schemacycle.MaxChain/4, err)
	}
	err := schemacycle.Check(decode(t, chain(1000)))
	var se *schemacycle.Error
	if !errors.As(err, &se) || !se.TooDeep {
		t.Fatalf("a chain of 1000: got %v, want a TooDeep error", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("more than %d schemas", schemacycle.MaxChain)) {
		t.Errorf("message: %s", err)
	}
}

// TestCheckWide walks a schema of 100k properties: each is queued, not
// recursed into, so the walk is one pass.
func TestCheckWide(t *testing.T) {
	props := map[string]any{}
	for i := range 100_000 {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"$ref": "#/$defs/N"}
	}
	doc := map[string]any{"properties": props, "$defs": map[string]any{"N": map[string]any{"properties": map[string]any{"next": map[string]any{"$ref": "#/$defs/N"}}}}}
	if err := schemacycle.Check(doc); err != nil {
		t.Fatal(err)
	}
}
