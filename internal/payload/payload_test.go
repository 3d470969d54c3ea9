package payload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

func read(t *testing.T, dir string) *Contract {
	t.Helper()
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(t.Context(), b, openapitools.Shapes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// brief is a diagnostic without its prose, for comparing.
type brief struct{ Field, Code, Severity string }

func briefs(ds []Diagnostic) []brief {
	out := []brief{}
	for _, d := range ds {
		out = append(out, brief{d.Field, d.Code, d.Severity})
	}
	return out
}

func TestValidate(t *testing.T) {
	catalog := read(t, "../../examples/bundles/catalog")
	orders := read(t, "../../examples/bundles/orders")
	payments := read(t, "../../examples/bundles/payments")
	tests := []struct {
		name    string
		c       *Contract
		sub     Subject
		value   string
		want    []brief
		subject Resolved
	}{
		{name: "request body valid", c: catalog, sub: Subject{Operation: "createProduct"},
			value:   `{"sku":"A-1","name":"Lamp","price":{"currency":"EUR","amountMinor":1299}}`,
			subject: Resolved{Kind: KindRequestBody, Operation: "createProduct", Method: "POST", Path: "/products", MediaType: "application/json", Interface: "http"}},
		{name: "request body faults", c: catalog, sub: Subject{Operation: "createProduct"},
			value:   `{"sku":"","name":"Lamp","price":{"currency":"euro","amountMinor":-1},"colour":"red"}`,
			want:    []brief{{"colour", DiagUnknown, "error"}, {"price.amountMinor", DiagRange, "error"}, {"price.currency", DiagPattern, "error"}, {"sku", DiagLength, "error"}},
			subject: Resolved{Kind: KindRequestBody, Operation: "createProduct", Method: "POST", Path: "/products", MediaType: "application/json", Interface: "http"}},
		{name: "request body by tool name and missing field", c: catalog, sub: Subject{Kind: KindRequestBody, Operation: "adjustStock"},
			value:   `{"reason":"recount"}`,
			want:    []brief{{"delta", DiagRequired, "error"}},
			subject: Resolved{Kind: KindRequestBody, Operation: "adjustStock", Method: "PATCH", Path: "/products/{productId}/stock", MediaType: "application/json", Interface: "http"}},
		{name: "parameters", c: catalog, sub: Subject{Kind: KindParameters, Operation: "listProducts"},
			value:   `{"limit":500,"tag":"red"}`,
			want:    []brief{{"limit", DiagRange, "error"}, {"tag", DiagType, "error"}},
			subject: Resolved{Kind: KindParameters, Operation: "listProducts", Method: "GET", Path: "/products", Interface: "http"}},
		{name: "no body means parameters when kind is not given", c: catalog, sub: Subject{Operation: "getProduct"},
			value:   `{"productId":"p-abcd"}`,
			subject: Resolved{Kind: KindParameters, Operation: "getProduct", Method: "GET", Path: "/products/{productId}", Interface: "http"}},
		{name: "response", c: catalog, sub: Subject{Operation: "getProduct", Status: "200"},
			value:   `{"sku":"A-1","name":"Lamp","price":{"currency":"EUR","amountMinor":1},"id":"p-1"}`,
			want:    []brief{{"stock", DiagRequired, "error"}},
			subject: Resolved{Kind: KindResponse, Operation: "getProduct", Method: "GET", Path: "/products/{productId}", Status: "200", MediaType: "application/json", Interface: "http"}},
		{name: "first 2XX response by default", c: catalog, sub: Subject{Kind: KindResponse, Operation: "listProducts"},
			value:   `{"items":[],"nextCursor":null}`,
			subject: Resolved{Kind: KindResponse, Operation: "listProducts", Method: "GET", Path: "/products", Status: "200", MediaType: "application/json", Interface: "http"}},
		{name: "message", c: orders, sub: Subject{Message: "OrderPlaced"},
			value:   `{"orderId":"o-1","customerId":"c-1","lines":[{"productId":"p-1","quantity":0},{"productId":7}]}`,
			want:    []brief{{"lines[0].quantity", DiagRange, "error"}, {"lines[1].productId", DiagType, "error"}, {"lines[1].quantity", DiagRequired, "error"}},
			subject: Resolved{Kind: KindMessage, Message: "OrderPlaced", Channel: "orderPlaced", Interface: "events"}},
		{name: "message by its AsyncAPI 3 operation", c: orders, sub: Subject{Message: "announceOrderCancelled"},
			value:   `{"orderId":"o-1","reason":"customer"}`,
			subject: Resolved{Kind: KindMessage, Message: "OrderCancelled", Channel: "orderCancelled", Interface: "events"}},
		{name: "message enum", c: orders, sub: Subject{Message: "OrderCancelled"},
			value:   `{"orderId":"o-1","reason":"bored"}`,
			want:    []brief{{"reason", DiagEnum, "error"}},
			subject: Resolved{Kind: KindMessage, Message: "OrderCancelled", Channel: "orderCancelled", Interface: "events"}},
		{name: "configuration valid", c: payments, sub: Subject{Kind: KindConfiguration},
			value:   `{"currency":"EUR","providerUrl":"https://psp","apiKey":"secret://x"}`,
			subject: Resolved{Kind: KindConfiguration, Configuration: "app"}},
		{name: "configuration faults", c: payments, sub: Subject{Configuration: "app"},
			value:   `{"currency":"JPY","providerUrl":"http://psp","captureDelaySeconds":1.5}`,
			want:    []brief{{"apiKey", DiagRequired, "error"}, {"captureDelaySeconds", DiagType, "error"}, {"currency", DiagEnum, "error"}, {"providerUrl", DiagPattern, "error"}},
			subject: Resolved{Kind: KindConfiguration, Configuration: "app"}},
		{name: "value of the wrong kind", c: payments, sub: Subject{Configuration: "app"},
			value:   `[1,2]`,
			want:    []brief{{"", DiagType, "error"}},
			subject: Resolved{Kind: KindConfiguration, Configuration: "app"}},
		{name: "asyncapi 2 message by channel", c: read(t, "testdata/auditlog"), sub: Subject{Message: "trail.entry.written"},
			value:   `{"entry":"e1","verb":"delete"}`,
			want:    []brief{{"at", DiagRequired, "error"}},
			subject: Resolved{Kind: KindMessage, Message: "trail.entry.written", Channel: "trail.entry.written", Interface: "trail"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.c.Validate(t.Context(), tc.sub, json.RawMessage(tc.value))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, briefs(res.Diagnostics), cmp.Comparer(func(a, b []brief) bool { return cmp.Equal(nilIfEmpty(a), nilIfEmpty(b)) })); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\n%+v", diff, res.Diagnostics)
			}
			if res.Valid != (len(tc.want) == 0) {
				t.Errorf("valid = %v with %d faults", res.Valid, len(tc.want))
			}
			if diff := cmp.Diff(tc.subject, res.Subject); diff != "" {
				t.Errorf("subject (-want +got):\n%s", diff)
			}
			for _, d := range res.Diagnostics {
				if d.Message == "" || d.Expected == "" || strings.Contains(d.Message, "jsonschema") || strings.Contains(d.Message, "%!") {
					t.Errorf("diagnostic %+v: want an agent's sentence and what is expected", d)
				}
			}
		})
	}
}

func nilIfEmpty(b []brief) []brief {
	if len(b) == 0 {
		return nil
	}
	return b
}

func TestValidateOffendingValue(t *testing.T) {
	c := read(t, "../../examples/bundles/catalog")
	res, err := c.Validate(t.Context(), Subject{Operation: "createProduct"}, json.RawMessage(`{"sku":"A","name":"L","price":{"currency":"euro","amountMinor":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Diagnostic{{Field: "price.currency", Code: DiagPattern, Expected: "a string matching ^[A-Z]{3}$", OffendingValue: "euro",
		Message: `"price.currency" must match the pattern ^[A-Z]{3}$; got "euro"`, Severity: SeverityError}}
	if diff := cmp.Diff(want, res.Diagnostics); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateQuestionErrors(t *testing.T) {
	catalog := read(t, "../../examples/bundles/catalog")
	payments := read(t, "../../examples/bundles/payments")
	ok := json.RawMessage(`{}`)
	tests := []struct {
		name       string
		c          *Contract
		sub        Subject
		value      json.RawMessage
		code       string
		field      string
		didYouMean string
	}{
		{"unknown operation", catalog, Subject{Operation: "createProdcut"}, ok, CodeNotFound, "Operation", "createProduct"},
		{"no subject", catalog, Subject{}, ok, CodeInvalidArgument, "Kind", ""},
		{"unknown kind", catalog, Subject{Kind: "reqest_body", Operation: "createProduct"}, ok, CodeInvalidArgument, "Kind", "request_body"},
		{"status on a request", catalog, Subject{Kind: KindRequestBody, Operation: "createProduct", Status: "201"}, ok, CodeInvalidArgument, "Status", ""},
		{"undeclared status", catalog, Subject{Operation: "createProduct", Status: "500"}, ok, CodeNotFound, "Status", ""},
		{"response without a JSON body", catalog, Subject{Operation: "deleteProduct", Status: "204"}, ok, CodeNotFound, "Status", ""},
		{"no request body", catalog, Subject{Kind: KindRequestBody, Operation: "getProduct"}, ok, CodeNotFound, "Operation", ""},
		{"unknown message", catalog, Subject{Message: "Nope"}, ok, CodeNotFound, "Message", ""},
		{"unknown configuration", payments, Subject{Configuration: "ap"}, ok, CodeNotFound, "Configuration", "app"},
		{"empty value", payments, Subject{Configuration: "app"}, nil, CodeInvalidArgument, "Value", ""},
		{"two values", payments, Subject{Configuration: "app"}, json.RawMessage(`{} {}`), CodeInvalidArgument, "Value", ""},
		{"too deep", payments, Subject{Configuration: "app"}, json.RawMessage(strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)), CodeInvalidArgument, "Value", ""},
		{"too big", payments, Subject{Configuration: "app"}, json.RawMessage(`"` + strings.Repeat("x", MaxValueBytes) + `"`), CodeInvalidArgument, "Value", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Validate(t.Context(), tc.sub, tc.value)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if e.Code != tc.code || e.Field != tc.field || e.DidYouMean != tc.didYouMean {
				t.Errorf("got %s %s %q (%s), want %s %s %q", e.Code, e.Field, e.DidYouMean, e.Message, tc.code, tc.field, tc.didYouMean)
			}
		})
	}
}

func TestValidateWarnings(t *testing.T) {
	b := writeBundle(t, map[string]string{
		"pacto.yaml": `pactoVersion: "2.0"
service: {name: svc, version: 1.0.0}
interfaces:
  - {name: http, type: openapi, ref: openapi.yaml}
`,
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
                id: {type: string, readOnly: true}
                legacy: {type: string, deprecated: true}
                note: {type: string, nullable: true}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  secret: {type: string, writeOnly: true}
`,
	})
	res, err := b.Validate(t.Context(), Subject{Operation: "createThing"}, json.RawMessage(`{"id":"x","legacy":"y","note":null}`))
	if err != nil {
		t.Fatal(err)
	}
	// id is read-only: internal/openapischema leaves it out of request schemas,
	// and this object admits other fields.
	want := []brief{{"legacy", DiagDeprecated, "warning"}}
	if diff := cmp.Diff(want, briefs(res.Diagnostics)); diff != "" || !res.Valid {
		t.Errorf("valid=%v (-want +got):\n%s", res.Valid, diff)
	}
	res, err = b.Validate(t.Context(), Subject{Operation: "createThing", Status: "200"}, json.RawMessage(`{"secret":"s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]brief{{"secret", DiagWriteOnly, "warning"}}, briefs(res.Diagnostics)); diff != "" || !res.Valid {
		t.Errorf("valid=%v (-want +got):\n%s", res.Valid, diff)
	}
}
