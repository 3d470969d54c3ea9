package payload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// For an operation without a request body, a value without kind is
// taken as parameters only when it is an object of parameter names;
// anything else is refused as ambiguous, naming both kinds, instead of
// being checked against a guess.
func TestKindOfABodilessOperation(t *testing.T) {
	c := read(t, "../../examples/bundles/catalog")
	product := `{"id":"p-0001","sku":"MUG-1","name":"Enamel mug","price":{"currency":"EUR","amountMinor":1290},"stock":10}`
	tests := []struct {
		name, op, value string
		kind            string // the kind checked, or "" for an ambiguity error
		says            []string
		didYouMean      string
	}{
		{"parameters by name", "getProduct", `{"productId":"p-abcd","X-Request-ID":"r1"}`, KindParameters, nil, ""},
		{"a response", "getProduct", product, "", []string{"getProduct (GET /products/{productId}) takes no request body", "id, name, price, sku, stock are not parameters", "kind — response", "parameters (its parameters: X-Request-ID, productId)"}, KindResponse},
		{"one stray key", "getProduct", `{"productId":"p-abcd","productID":"p-abcd"}`, "", []string{"productID are not parameters"}, KindResponse},
		{"an empty object", "listProducts", `{}`, "", []string{"an empty object could be either"}, KindResponse},
		{"an array", "listProducts", `[{"limit":1}]`, "", []string{"the value is an array of 1 items"}, KindResponse},
		{"no parameters and no JSON response", "getHealth", `{"status":"ok"}`, "", []string{"declares no parameters", "(it declares none)"}, ""},
		{"many keys", "getProduct", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`, "", []string{"a, b, c, d, e and 2 more"}, KindResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Validate(t.Context(), Subject{Operation: tt.op}, json.RawMessage(tt.value))
			if tt.kind != "" {
				if err != nil || res.Subject.Kind != tt.kind {
					t.Fatalf("checked as %+v, %v; want %s", res, err, tt.kind)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %+v, %v; want an ambiguity error", res, err)
			}
			if pe.Code != CodeInvalidArgument || pe.Field != "Kind" || pe.DidYouMean != tt.didYouMean {
				t.Errorf("error %+v", pe)
			}
			if diff := cmp.Diff([]string{KindResponse, KindParameters}, pe.Accepted); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
			for _, s := range tt.says {
				if !strings.Contains(pe.Message, s) {
					t.Errorf("message lacks %q:\n%s", s, pe.Message)
				}
			}
		})
	}
	// Said outright, each kind is checked as asked.
	res, err := c.Validate(t.Context(), Subject{Kind: KindResponse, Operation: "getProduct"}, json.RawMessage(product))
	if err != nil || !res.Valid || res.Subject.Status != "200" {
		t.Errorf("kind response: %+v, %v", res, err)
	}
	res, err = c.Validate(t.Context(), Subject{Kind: KindParameters, Operation: "getProduct"}, json.RawMessage(product))
	if err != nil || res.Valid {
		t.Errorf("kind parameters on a product: %+v, %v; want it checked, and invalid", res, err)
	}
	// An operation with a body still means its body.
	res, err = c.Validate(t.Context(), Subject{Operation: "createProduct"}, json.RawMessage(`{"sku":"A"}`))
	if err != nil || res.Subject.Kind != KindRequestBody {
		t.Errorf("createProduct without kind: %+v, %v", res, err)
	}
}
