package openapitools

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// Accepted returns the tool's argument names, sorted.
func (t *Tool) Accepted() []string { return slices.Clone(t.op.validator.names) }

// ArgumentSchemas returns the resolved schema of each argument, built on
// first use, for the caller that checks arguments before invoke.Call (the
// package has no argument decoder of its own: the MCP server's is the one).
// A value nested deeper than [TooDeep] allows must be refused before it is
// validated. The map and the schemas are shared: read them, never change
// them.
func (t *Tool) ArgumentSchemas() map[string]*jsonschema.Resolved {
	props, _ := t.op.validator.resolved() // built on first use; nil if they cannot be
	return props
}

// maxArgumentDepth bounds the nesting of one argument value. Validation
// recurses once per level times the schemas applied at each level, which
// projection bounds (schemacycle.MaxChain); together they keep the
// validator's stack small whatever the arguments.
const maxArgumentDepth = openapischema.MaxValueDepth

// TooDeep reports whether an argument value is nested deeper than
// validation accepts (maxArgumentDepth levels of objects and arrays).
// Every caller that validates arguments against a tool's schemas checks
// it first, the MCP server's decoder included.
func TooDeep(v any) bool { return nestedDeeper(v, maxArgumentDepth) }

// MaxArgumentDepth is the nesting TooDeep allows.
const MaxArgumentDepth = maxArgumentDepth

// nestedDeeper reports whether v holds objects or arrays more than limit
// levels deep. It stops at limit, so its own recursion is bounded.
func nestedDeeper(v any, limit int) bool {
	switch t := v.(type) {
	case map[string]any:
		if limit == 0 {
			return true
		}
		for _, e := range t {
			if nestedDeeper(e, limit-1) {
				return true
			}
		}
	case []any:
		if limit == 0 {
			return true
		}
		for _, e := range t {
			if nestedDeeper(e, limit-1) {
				return true
			}
		}
	}
	return false
}
