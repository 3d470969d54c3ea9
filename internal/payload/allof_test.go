package payload

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// closedAllOf is the catalog example as it was: Product is an allOf over
// NewProduct, which is closed, and a branch that adds id and stock, so
// no product can fit it.
var closedAllOf = map[string]string{
	"pacto.yaml": "pactoVersion: \"2.0\"\nservice: {name: shop, version: 1.0.0}\ninterfaces:\n  - {name: http, type: openapi, ref: openapi.yaml}\n",
	"openapi.yaml": `openapi: 3.1.0
info: {title: Shop, version: 1.0.0}
paths:
  /products/{id}:
    get:
      operationId: getProduct
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: The product.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Product"}
  /pages:
    get:
      operationId: listPages
      responses:
        "200":
          description: Inline branches.
          content:
            application/json:
              schema:
                allOf:
                  - {type: object, additionalProperties: false, properties: {title: {type: string}}}
                  - {type: object, properties: {page: {type: integer}}}
components:
  schemas:
    NewProduct:
      type: object
      additionalProperties: false
      required: [sku]
      properties:
        sku: {type: string}
        price: {type: integer}
    Product:
      allOf:
        - $ref: "#/components/schemas/NewProduct"
        - type: object
          required: [id]
          properties:
            id: {type: string}
            stock: {type: integer}
`,
}

// A field a sibling allOf branch declares is not called undeclared: the
// diagnostic names the branch that is closed. A field no branch declares
// keeps the plain message.
func TestUnknownFieldNamesTheClosedBranch(t *testing.T) {
	c := writeBundle(t, closedAllOf)
	res, err := c.Validate(t.Context(), Subject{Kind: KindResponse, Operation: "getProduct"}, json.RawMessage(`{"sku":"A-1","id":"p-1","stock":3,"colour":"red"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range res.Diagnostics {
		if d.Code != DiagUnknown {
			t.Errorf("unexpected %+v", d)
		}
		got[d.Field] = d.Message
	}
	if diff := cmp.Diff([]string{"colour", "id", "stock"}, sortedKeys(got)); diff != "" {
		t.Fatalf("fields (-want +got):\n%s\n%+v", diff, res.Diagnostics)
	}
	if !strings.Contains(got["colour"], "not a field the contract declares") {
		t.Errorf("colour: %s", got["colour"])
	}
	for _, f := range []string{"id", "stock"} {
		if !strings.Contains(got[f], "NewProduct") || !strings.Contains(got[f], "is closed") || strings.Contains(got[f], "not a field the contract declares") {
			t.Errorf("%s: %s; want the closed branch named, not an undeclared field", f, got[f])
		}
	}

	res, err = c.Validate(t.Context(), Subject{Kind: KindResponse, Operation: "listPages"}, json.RawMessage(`{"title":"t","page":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, "branch 1 of the allOf") {
		t.Errorf("an inline closed branch: %+v", res.Diagnostics)
	}
}

// BenchmarkClosedBranch compares, side by side, a check that finds fields
// refused by a closed allOf branch (and names the branch) with the same
// value checked as parameters, where the same fields are plainly unknown,
// and the kind inferred for a bodiless operation with the kind given.
func BenchmarkClosedBranch(b *testing.B) {
	c := writeBundle(b, closedAllOf)
	value := json.RawMessage(`{"sku":"A-1","id":"p-1","stock":3,"colour":"red"}`)
	params := json.RawMessage(`{"id":"p-1"}`)
	for _, tc := range []struct {
		name  string
		sub   Subject
		value json.RawMessage
	}{
		{"closed-allOf-response", Subject{Kind: KindResponse, Operation: "getProduct"}, value},
		{"plain-unknown-fields", Subject{Kind: KindParameters, Operation: "getProduct"}, value},
		{"parameters-kind-inferred", Subject{Operation: "getProduct"}, params},
		{"parameters-kind-given", Subject{Kind: KindParameters, Operation: "getProduct"}, params},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Validate(b.Context(), tc.sub, tc.value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
