package mcp

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/demoservice"
)

// demoCall calls one generated tool and returns the response's status
// and JSON body.
type demoCall func(tool string, args map[string]any) (status int, body any)

// exampleService is an example bundle's own service and a script of calls
// that reaches every response the contract gives a JSON body.
type exampleService struct {
	handler func(token string) http.Handler
	script  func(t *testing.T, call demoCall)
}

// exampleServices are the services of examples/bundles, by bundle name
// (`make demo` runs catalog's, test/demoservice, through hack/demoservice).
// A bundle whose OpenAPI declares a JSON response needs one here.
var exampleServices = map[string]exampleService{
	"catalog": {
		handler: func(token string) http.Handler { return demoservice.New(&demoservice.Options{Token: token}) },
		script: func(t *testing.T, call demoCall) {
			call("getHealth", nil)
			_, page := call("listProducts", map[string]any{"limit": 2})
			cursor, _ := page.(map[string]any)["nextCursor"].(string)
			if cursor == "" {
				t.Fatalf("listProducts limit 2 of the seed products gave no nextCursor: %v", page)
			}
			call("listProducts", map[string]any{"limit": 2, "cursor": cursor})
			call("listProducts", map[string]any{"tag": []string{"camping", "light"}})
			call("listProducts", map[string]any{"cursor": "not-issued"})
			status, created := call("createProduct", map[string]any{"body": map[string]any{"sku": "LAMP-9", "name": "Desk lamp", "price": map[string]any{"currency": "EUR", "amountMinor": 3999}}})
			id, _ := created.(map[string]any)["id"].(string)
			if status != http.StatusCreated || id == "" {
				t.Fatalf("createProduct: %d %v", status, created)
			}
			call("createProduct", map[string]any{"body": map[string]any{"sku": "LAMP-9", "name": "Again", "price": map[string]any{"currency": "EUR", "amountMinor": 1}}})
			call("getProduct", map[string]any{"productId": id})
			call("getProduct", map[string]any{"productId": "p-9999"})
			call("replaceProduct", map[string]any{"productId": id, "body": map[string]any{"sku": "LAMP-9", "name": "Desk lamp, brass", "tags": []string{"light"}, "price": map[string]any{"currency": "EUR", "amountMinor": 4599}}})
			call("adjustStock", map[string]any{"productId": id, "body": map[string]any{"delta": 5, "reason": "delivery"}})
			call("adjustStock", map[string]any{"productId": id, "body": map[string]any{"delta": -50}})
			call("deleteProduct", map[string]any{"productId": id})
			call("deleteProduct", map[string]any{"productId": id})
			call("replaceProduct", map[string]any{"productId": id, "body": map[string]any{"sku": "LAMP-9", "name": "Gone", "price": map[string]any{"currency": "EUR", "amountMinor": 1}}})
			call("adjustStock", map[string]any{"productId": id, "body": map[string]any{"delta": 1}})
		},
	},
}

// TestExamplesAnswerTheirContracts runs every example bundle's own
// service on loopback, calls it through the bundle's generated tools and
// checks each response with pacto_validate_payload on the same server:
// a status the contract does not declare for the operation, or a body
// that does not fit the schema it declares, fails. Every response the
// contract gives a JSON body must be reached, and a bundle that declares
// one must have a service here.
func TestExamplesAnswerTheirContracts(t *testing.T) {
	dirs, err := filepath.Glob("../examples/bundles/*/pacto.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no example bundles: %v", err)
	}
	for name := range exampleServices {
		if !slices.Contains(dirs, filepath.Join("..", "examples", "bundles", name, "pacto.yaml")) {
			t.Errorf("exampleServices names %s, which is not an example bundle", name)
		}
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			b, err := bundle.LoadDir(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			shapes, err := openapitools.Shapes(t.Context(), b)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{} // "operation status" of every JSON response
			for _, op := range shapes {
				for _, r := range op.Responses {
					if r.MediaType != "" {
						want[op.OperationID+" "+r.Status] = true
					}
				}
			}
			svc, ok := exampleServices[name]
			switch {
			case len(want) == 0:
				t.Logf("%s declares no JSON response body (%d OpenAPI operations): no service to check", name, len(shapes))
				return
			case !ok:
				t.Fatalf("%s declares JSON responses (%s) but has no service in exampleServices to check them against", name, strings.Join(slices.Sorted(keysOf(want)), ", "))
			}
			const token = "s3cret"
			srv := httptest.NewServer(svc.handler(token))
			t.Cleanup(srv.Close)
			s := capabilityServer(t, dir, &openapitools.Options{BaseURL: srv.URL, AllowWrites: true, ConfirmWrites: openapitools.ConfirmNever, Auth: []string{"bearerAuth=" + token}},
				&Options{Workspace: t.TempDir(), Families: []Family{FamilyCapability, FamilyPayload}})
			cs := connect(t.Context(), t, s)
			byOp := map[string]*openapischema.Shape{}
			for _, op := range shapes {
				byOp[op.OperationID] = op
			}
			reached := map[string]bool{}
			call := func(tool string, args map[string]any) (int, any) {
				t.Helper()
				if args == nil {
					args = map[string]any{}
				}
				got := structured(t, callTool(t, cs, tool, args))
				status, ok := got["status"].(float64)
				if !ok {
					t.Fatalf("%s %v: no response: %v", tool, args, got)
				}
				code := strconv.Itoa(int(status))
				declared := declaredResponse(byOp[tool], code)
				switch {
				case declared == nil:
					t.Errorf("%s answered %s to %v, a status its contract does not declare", tool, code, args)
				case declared.MediaType != "":
					reached[tool+" "+declared.Status] = true
					check := callTool(t, cs, "pacto_validate_payload", map[string]any{"service": name, "operation": tool, "kind": "response", "status": code, "payload": got["body"]})
					if res := structured(t, check); check.IsError || res["valid"] != true {
						t.Errorf("%s's %s response does not fit its contract: %s\nbody: %v", tool, code, text(check), got["body"])
					}
				}
				return int(status), got["body"]
			}
			svc.script(t, call)
			for _, k := range slices.Sorted(keysOf(want)) {
				if !reached[k] {
					t.Errorf("the script never reached %s, a response the contract gives a JSON body", k)
				}
			}
		})
	}
}

// declaredResponse is the response an operation declares for a status:
// as written, else its range (2XX), else default.
func declaredResponse(op *openapischema.Shape, code string) *openapischema.ResponseShape {
	if op == nil {
		return nil
	}
	for _, want := range []string{code, code[:1] + "XX", "default"} {
		for i, r := range op.Responses {
			if strings.EqualFold(r.Status, want) {
				return &op.Responses[i]
			}
		}
	}
	return nil
}
