package payload

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExplain(t *testing.T) {
	catalog := read(t, "../../examples/bundles/catalog")
	orders := read(t, "../../examples/bundles/orders")
	payments := read(t, "../../examples/bundles/payments")

	t.Run("request and response property, every place", func(t *testing.T) {
		ex, err := catalog.Explain(t.Context(), FieldQuery{Path: "price.currency"})
		if err != nil {
			t.Fatal(err)
		}
		type place struct{ Kind, Operation, Status string }
		var got []place
		for _, d := range ex.Definitions {
			got = append(got, place{d.Where.Kind, d.Where.Operation, d.Where.Status})
			if d.Type != "string" || d.Pattern != "^[A-Z]{3}$" || !d.Required {
				t.Errorf("%+v: want a required string with its pattern", d)
			}
		}
		want := []place{{KindRequestBody, "createProduct", ""}, {KindResponse, "createProduct", "201"}, {KindResponse, "getProduct", "200"}, {KindRequestBody, "replaceProduct", ""}, {KindResponse, "replaceProduct", "200"}}
		if diff := cmp.Diff(want, got); diff != "" || !ex.Found {
			t.Errorf("found=%v (-want +got):\n%s", ex.Found, diff)
		}
		if diff := cmp.Diff([]string{"createProduct", "getProduct", "replaceProduct"}, ex.Operations); diff != "" {
			t.Errorf("operations (-want +got):\n%s", diff)
		}
	})
	t.Run("parameter with default and constraints", func(t *testing.T) {
		ex, err := catalog.Explain(t.Context(), FieldQuery{Path: "limit", Subject: Subject{Operation: "listProducts"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Definitions) != 1 {
			t.Fatalf("%+v", ex)
		}
		d := ex.Definitions[0]
		want := Field{Type: "integer", Description: "Page size.", Default: jsonNum("20"), Constraints: map[string]any{"minimum": jsonNum("1"), "maximum": jsonNum("100")}}
		if diff := cmp.Diff(want, d.Field); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("array items by both spellings", func(t *testing.T) {
		for _, p := range []string{"lines[].quantity", "lines.quantity", "lines[0].quantity"} {
			ex, err := orders.Explain(t.Context(), FieldQuery{Path: p})
			if err != nil {
				t.Fatal(err)
			}
			if !ex.Found || ex.Definitions[0].Where.Message != "OrderPlaced" || ex.Definitions[0].Type != "integer" || !ex.Definitions[0].Required {
				t.Errorf("%s: %+v", p, ex)
			}
		}
	})
	t.Run("enum of a message field", func(t *testing.T) {
		ex, err := orders.Explain(t.Context(), FieldQuery{Path: "reason", Subject: Subject{Kind: KindMessage}})
		if err != nil {
			t.Fatal(err)
		}
		if !ex.Found || len(ex.Definitions[0].Enum) != 3 {
			t.Errorf("%+v", ex)
		}
	})
	t.Run("configuration property and its value", func(t *testing.T) {
		ex, err := payments.Explain(t.Context(), FieldQuery{Path: "apiKey"})
		if err != nil {
			t.Fatal(err)
		}
		d := ex.Definitions[0]
		if !ex.Found || d.Where.Configuration != "app" || d.Description != "A secret:// reference, never the key itself." || d.Set == nil || !*d.Set || d.Value != "secret://payments/psp-api-key" {
			t.Errorf("%+v", ex)
		}
		ex, err = payments.Explain(t.Context(), FieldQuery{Path: "captureDelaySeconds"})
		if err != nil || ex.Definitions[0].Default == nil {
			t.Errorf("%+v %v", ex, err)
		}
	})
	t.Run("miss with candidates", func(t *testing.T) {
		ex, err := catalog.Explain(t.Context(), FieldQuery{Path: "currency"})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Found || ex.Reason == "" || !contains(ex.Candidates, "price.currency") {
			t.Errorf("%+v", ex)
		}
		ex, err = payments.Explain(t.Context(), FieldQuery{Path: "captureDelay"})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Found || !contains(ex.Candidates, "captureDelaySeconds") {
			t.Errorf("%+v", ex)
		}
	})
	t.Run("unknown narrowing subject is an error", func(t *testing.T) {
		_, err := catalog.Explain(t.Context(), FieldQuery{Path: "sku", Subject: Subject{Operation: "nope"}})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeNotFound || e.Field != "Operation" {
			t.Errorf("got %v", err)
		}
		_, err = catalog.Explain(t.Context(), FieldQuery{Path: " "})
		if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Field != "Path" {
			t.Errorf("got %v", err)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestExplainOpenAPI30: an OpenAPI 3.0 schema's example, nullable and
// deprecated come through internal/openapischema's conversion.
func TestExplainOpenAPI30(t *testing.T) {
	c := writeBundle(t, map[string]string{
		"pacto.yaml": "pactoVersion: \"2.0\"\nservice: {name: svc, version: 1.0.0}\ninterfaces:\n  - {name: http, type: openapi, ref: openapi.yaml}\n",
		"openapi.yaml": `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    post:
      operationId: createThing
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                note: {type: string, nullable: true, example: "fragile", description: Handling note., deprecated: true}
      responses:
        "204": {description: done}
`,
	})
	ex, err := c.Explain(t.Context(), FieldQuery{Path: "note"})
	if err != nil || !ex.Found {
		t.Fatalf("%v %+v", err, ex)
	}
	d := ex.Definitions[0]
	if d.Type != "null or string" || d.Description != "Handling note." || len(d.Examples) != 1 || d.Examples[0] != "fragile" || !d.Deprecated {
		t.Errorf("%+v", d.Field)
	}
	res, err := c.Validate(t.Context(), Subject{Operation: "createThing"}, json.RawMessage(`{"note":null}`))
	if err != nil || !res.Valid {
		t.Errorf("a null note: %v %+v", err, res)
	}
}
