package validate

import (
	"testing"

	"github.com/kubepact/kubepact/bundle/contract"
)

// TestSpecRefsFollowAgrees: the quick walk says every $ref follows exactly
// when checkSpecRefs reports nothing, including for $refs in the places
// both skip (literal values, x- extensions) and deep inside arrays.
func TestSpecRefsFollowAgrees(t *testing.T) {
	for _, src := range []string{
		"openapi: 3.0.3\npaths: {}\n",
		"openapi: 3.0.3\ncomponents: {schemas: {A: {type: string}, B: {$ref: '#/components/schemas/A'}}}\n",
		"openapi: 3.0.3\ncomponents: {schemas: {B: {$ref: '#/components/schemas/Missing'}}}\n",
		"openapi: 3.0.3\ncomponents: {schemas: {B: {allOf: [{type: object}, {$ref: 'other.yaml#/X'}]}}}\n",
		"openapi: 3.0.3\ncomponents: {schemas: {B: {allOf: [{type: object}, {$ref: 'components/schemas/B'}]}}}\n",
		"openapi: 3.0.3\ncomponents: {schemas: {B: {type: object, example: {$ref: '#/nowhere'}, default: {$ref: x}, enum: [{$ref: y}], x-note: {$ref: z}}}}\n",
		"openapi: 3.0.3\ncomponents: {schemas: {B: {const: {$ref: '#/nowhere'}}}}\n",
		"openapi: 3.0.3\nx-top: {$ref: '#/nowhere'}\npaths: {/a: {get: {responses: {'200': {$ref: '#/components/responses/R'}}}}}\n",
		"openapi: 3.0.3\npaths: {/a: {get: {responses: {'200': {$ref: '#'}}}}}\n",
	} {
		tree, err := contract.DecodeDocument("", []byte(src), len(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		doc := tree.(map[string]any)
		report := checkSpecRefs(doc)
		if follow := specRefsFollow(doc, doc); follow != (report == nil) {
			t.Errorf("%q: specRefsFollow says %v, checkSpecRefs reports %v", src, follow, report)
		}
	}
}
