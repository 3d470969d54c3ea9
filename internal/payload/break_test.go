package payload

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/test/pactocompat"
)

// TestCycles: a schema that applies itself to the same value forever is
// refused as a question (SCHEMA_UNAVAILABLE), never evaluated, and a
// legitimately recursive one checks a deep tree; explain walks both.
func TestCycles(t *testing.T) {
	spec, err := os.ReadFile("../openapitools/testdata/cyclic-openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	events := `asyncapi: 3.0.0
info: {title: e, version: "1"}
channels:
  loop:
    messages:
      Loop: {payload: {$ref: "#/components/schemas/L"}}
components:
  schemas:
    L: {allOf: [{$ref: "#/components/schemas/M"}]}
    M: {anyOf: [{$ref: "#/components/schemas/L"}]}
`
	c := writeBundle(t, map[string]string{
		"pacto.yaml": `pactoVersion: "2.0"
service: {name: cyc, version: 1.0.0}
interfaces:
  - {name: http, type: openapi, ref: openapi.yaml}
  - {name: events, type: asyncapi, ref: events.yaml}
configurations:
  - {name: self, schema: self.json}
`,
		"openapi.yaml": string(spec),
		"events.yaml":  events,
		"self.json":    `{"$ref": "#"}`,
	})
	var e *Error
	if _, err := c.Validate(t.Context(), Subject{Kind: KindParameters, Operation: "getA"}, json.RawMessage(`{"q":"x"}`)); !errors.As(err, &e) || e.Code != CodeSchemaUnavailable {
		t.Errorf("getA: got %v, want SCHEMA_UNAVAILABLE", err)
	}
	for _, sub := range []Subject{{Message: "Loop"}, {Configuration: "self"}} {
		if _, err := c.Validate(t.Context(), sub, json.RawMessage(`{"a":1}`)); !errors.As(err, &e) || e.Code != CodeSchemaUnavailable {
			t.Errorf("%+v: got %v, want SCHEMA_UNAVAILABLE", sub, err)
		}
	}
	deep := `{"name":"root","children":[` + strings.Repeat(`{"name":"n","children":[`, 30) + `{"name":7}` + strings.Repeat(`]}`, 30) + `]}`
	res, err := c.Validate(t.Context(), Subject{Operation: "postTree"}, json.RawMessage(deep))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != DiagType || !strings.HasSuffix(res.Diagnostics[0].Field, "children[0].name") {
		t.Errorf("%+v", res)
	}
	for _, p := range []string{"children[].children[].name", "q", "zzz"} {
		if _, err := c.Explain(t.Context(), FieldQuery{Path: p}); err != nil {
			t.Errorf("explain %s: %v", p, err)
		}
	}
}

// TestWideValue: a wide value is checked whole and its diagnostics are
// bounded.
func TestWideValue(t *testing.T) {
	c := read(t, "../../examples/bundles/orders")
	var b strings.Builder
	b.WriteString(`{"orderId":"o","customerId":"c","lines":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"productId":1,"quantity":0}`)
	}
	b.WriteString(`]}`)
	res, err := c.Validate(t.Context(), Subject{Message: "OrderPlaced"}, json.RawMessage(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || !res.Truncated || len(res.Diagnostics) != maxDiagnostics {
		t.Errorf("valid=%v truncated=%v diagnostics=%d", res.Valid, res.Truncated, len(res.Diagnostics))
	}
}

// TestConcurrentQuestions: one contract answers many goroutines at once,
// schemas compiled on first use by whichever asks first (run with -race).
func TestConcurrentQuestions(t *testing.T) {
	c := read(t, "../../examples/bundles/catalog")
	subjects := []Subject{{Operation: "createProduct"}, {Operation: "getProduct", Status: "200"}, {Kind: KindParameters, Operation: "listProducts"}, {Operation: "adjustStock"}}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			sub := subjects[i%len(subjects)]
			res, err := c.Validate(t.Context(), sub, json.RawMessage(`{"sku":"x"}`))
			if err != nil || res.Valid {
				t.Errorf("%+v: %v %+v", sub, err, res)
			}
			if ex, err := c.Explain(t.Context(), FieldQuery{Path: "price.amountMinor"}); err != nil || !ex.Found {
				t.Errorf("explain: %v %+v", err, ex)
			}
		})
	}
	wg.Wait()
}

// TestIncompleteBundle: a contract names an OpenAPI document, an AsyncAPI
// document and a configuration schema that the bundle does not hold, and a
// configuration in another bundle: each question says so instead of
// answering valid or invalid.
func TestIncompleteBundle(t *testing.T) {
	checkIncomplete(t, read(t, "testdata/incomplete"), []incompleteCase{
		{Subject{Operation: "submitRemittance"}, CodeNotFound, "could not be read"},
		{Subject{Configuration: "shared"}, CodeSchemaUnavailable, "another bundle"},
		{Subject{Configuration: "local"}, CodeSchemaUnavailable, "could not be read"},
		{Subject{Message: "RemittanceSettled"}, CodeNotFound, "could not be read"},
	}, "REGION", "configuration shared: its schema lives in another bundle")
}

// TestIncompleteCompatBundle: the same of Pacto's demo payments-service,
// whose copy lacks those files too (the optional compatibility data;
// skipped without it).
func TestIncompleteCompatBundle(t *testing.T) {
	checkIncomplete(t, read(t, filepath.Join(pactocompat.Demo(t), "bundles", "payments-service", "v2.1.0")), []incompleteCase{
		{Subject{Operation: "createPayment"}, CodeNotFound, "could not be read"},
		{Subject{Configuration: "platform"}, CodeSchemaUnavailable, "another bundle"},
		{Subject{Configuration: "app"}, CodeSchemaUnavailable, "could not be read"},
		{Subject{Message: "PaymentCompleted"}, CodeNotFound, "could not be read"},
	}, "LOG_LEVEL", "configuration platform: its schema lives in another bundle")
}

type incompleteCase struct {
	sub  Subject
	code string
	says string
}

func checkIncomplete(t *testing.T, c *Contract, cases []incompleteCase, field, reason string) {
	t.Helper()
	var e *Error
	for _, tc := range cases {
		_, err := c.Validate(t.Context(), tc.sub, json.RawMessage(`{}`))
		if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%+v: got %v; want %s saying %q", tc.sub, err, tc.code, tc.says)
		}
	}
	ex, err := c.Explain(t.Context(), FieldQuery{Path: field})
	if err != nil || ex.Found || !strings.Contains(ex.Reason, reason) {
		t.Errorf("explain %s: %v %+v; want not found because %q", field, err, ex, reason)
	}
}

// TestEncodedPayloadHint: an object sent as a JSON string is a type
// mismatch whose message says how to send it.
func TestEncodedPayloadHint(t *testing.T) {
	c := read(t, "../../examples/bundles/payments")
	res, err := c.Validate(t.Context(), Subject{Configuration: "app"}, json.RawMessage(`"{\"currency\":\"EUR\"}"`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, "pass the JSON value itself") {
		t.Errorf("%+v", res)
	}
}

// TestSwagger2: a Swagger 2.0 document, converted as for generated tools:
// a body parameter, a response schema with a recursive definition.
func TestSwagger2(t *testing.T) {
	spec, err := os.ReadFile("../openapitools/testdata/swagger2.json")
	if err != nil {
		t.Fatal(err)
	}
	c := writeBundle(t, map[string]string{
		"pacto.yaml":    "pactoVersion: \"2.0\"\nservice: {name: legacy, version: 1.0.0}\ninterfaces:\n  - {name: http, type: openapi, ref: swagger2.json}\n",
		"swagger2.json": string(spec),
	})
	res, err := c.Validate(t.Context(), Subject{Operation: "addPet"}, json.RawMessage(`{"name":"a-very-long-name","mate":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]brief{{"mate.name", DiagRequired, "error"}, {"name", DiagLength, "error"}}, briefs(res.Diagnostics)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	res, err = c.Validate(t.Context(), Subject{Operation: "listPets", Status: "200"}, json.RawMessage(`[{"name":"x"},{"name":7}]`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]brief{{"[1].name", DiagType, "error"}}, briefs(res.Diagnostics)); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	res, err = c.Validate(t.Context(), Subject{Kind: KindParameters, Operation: "listPets"}, json.RawMessage(`{"limit":51}`))
	if err != nil || len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != DiagRange {
		t.Errorf("parameters: %v %+v", err, res)
	}
}
