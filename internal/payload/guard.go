package payload

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxSteps bounds the schema evaluations one check makes: a schema node
// applied to a value node is one step (so are the nodes compiled, and the
// nodes the warnings walk visits). A value of MaxValueBytes against an
// ordinary schema takes well under a million; alternatives (anyOf, oneOf)
// under recursion multiply with the value's nesting and could take
// forever. At 0.2 to 1.5 µs a step (an idle core to a loaded one), the
// bound is one to six seconds of CPU.
const MaxSteps = 4_000_000

// errTooManySteps is why a check that ran out of steps stopped.
var errTooManySteps = errors.New("too many evaluation steps")

// guard is what one check may still spend: it stops the schema compiler
// or validator it is wired into (see newInstance) when the call's ctx is
// done or MaxSteps are used up, by panicking with a stop that check
// recovers. The validator has no context of its own to honour, and a
// goroutine cannot be stopped from outside: this is how a cancelled call's
// work ends instead of running on unseen.
type guard struct {
	ctx   context.Context //nolint:containedctx // the check's own ctx, for the validator's callbacks
	steps int
}

// stop is the panic value a guard stops a check with.
type stop struct{ err error }

// step counts one step and stops the check when it is cancelled or out of
// steps.
func (g *guard) step() {
	g.steps++
	if g.steps > MaxSteps {
		panic(stop{errTooManySteps})
	}
	select {
	case <-g.ctx.Done():
		panic(stop{g.ctx.Err()})
	default:
	}
}

// check runs fn with the guard set to ctx and a fresh step count, and
// returns the error it was stopped with, if it was: ctx's error, or
// errTooManySteps. Any other panic goes on.
func (g *guard) check(ctx context.Context, fn func()) (err error) {
	g.ctx, g.steps = ctx, 0
	defer func() {
		g.ctx = nil
		if p := recover(); p != nil {
			s, ok := p.(stop)
			if !ok {
				panic(p)
			}
			err = s.err
		}
	}()
	fn()
	return nil
}

// guardVocabulary is a vocabulary without keywords whose Compile hook the
// compiler calls for every schema object it compiles: a step of the
// guard, so a compilation is cancelled like a validation.
func (g *guard) vocabulary() *jsonschema.Vocabulary {
	return &jsonschema.Vocabulary{
		URL: "https://kubepact.dev/payload/guard",
		Compile: func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
			g.step()
			return nil, nil
		},
	}
}

// guardFormat names the format the guard hooks into nodes that have none.
const guardFormat = "kubepact-guard"

// wire hooks the guard into every node of a compiled schema below prefix
// (the bundle's own documents, never the draft metaschemas another
// schema may point at, which are shared): the validator checks a node's
// format before it descends into anything else the node applies, and does
// so in every mode (a failing alternative, a not, an if), so a node's
// format is where a step is taken. A node without a format gets one that
// accepts everything; a node with one keeps it, behind the step.
func (g *guard) wire(root *jsonschema.Schema, prefix string) {
	seen := map[*jsonschema.Schema]bool{}
	todo := []*jsonschema.Schema{root}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if s == nil || seen[s] || !strings.HasPrefix(s.Location, prefix) {
			continue
		}
		seen[s] = true
		if f := s.Format; f == nil {
			s.Format = &jsonschema.Format{Name: guardFormat, Validate: func(any) error { g.step(); return nil }}
		} else {
			s.Format = &jsonschema.Format{Name: f.Name, Validate: func(v any) error { g.step(); return f.Validate(v) }}
		}
		todo = append(todo, subschemas(s)...)
	}
}

// subschemas lists every schema s applies, by every keyword of v6's
// Schema that holds one.
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
		s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema}
	if s.DynamicRef != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	out = append(out, s.PrefixItems...)
	for _, p := range s.Properties {
		out = append(out, p)
	}
	for _, p := range s.PatternProperties {
		out = append(out, p)
	}
	for _, p := range s.DependentSchemas {
		out = append(out, p)
	}
	for _, d := range s.Dependencies {
		if p, ok := d.(*jsonschema.Schema); ok {
			out = append(out, p)
		}
	}
	for _, a := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := a.(type) {
		case *jsonschema.Schema:
			out = append(out, x)
		case []*jsonschema.Schema:
			out = append(out, x...)
		}
	}
	return out
}

// tooManySteps is the answer to a check that ran out of steps.
func tooManySteps(what string) error {
	return &Error{Code: CodeSchemaUnavailable, Field: "Value",
		Message: fmt.Sprintf("the value could not be checked against %s: it takes more than %d evaluation steps (the schema's alternatives, anyOf or oneOf, multiply with the value's nesting); check a smaller part of it", what, MaxSteps)}
}
