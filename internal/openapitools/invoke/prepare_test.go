package invoke

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// defaultsSpec has a parameter in every place and a body, each with a
// default: what kin-openapi would write into the request were defaults
// set (kinOptions skips them).
const defaultsSpec = `openapi: 3.0.3
info: {title: d, version: '1'}
servers: [{url: 'http://127.0.0.1:9/base'}]
paths:
  /items/{id}:
    post:
      operationId: putItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string, default: dq}}
        - {name: X-Obj, in: header, schema: {type: string, default: dh}}
        - {name: c, in: cookie, schema: {type: string, default: dc}}
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {n: {type: integer, default: 7}, s: {type: string}}}
      responses: {'200': {description: ok}}
  /products/{productId}:
    get:
      operationId: getProduct
      parameters:
        - {name: productId, in: path, required: true, schema: {type: string}}
      responses: {'200': {description: ok}}
`

func prepareTool(t *testing.T, name string) *openapitools.Tool {
	t.Helper()
	c, err := projectSpec(t, "d", "d.yaml", []byte(defaultsSpec), &openapitools.Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	tl := c.Tool(name)
	if tl == nil {
		t.Fatalf("no tool %s in %v; withheld %+v", name, toolNames(c), c.Withheld)
	}
	return tl
}

// sentRequest is what of a request reaches the service.
type sentRequest struct {
	Method, URL   string
	Header        http.Header
	ContentLength int64
	Body          string
}

func sentOf(t *testing.T, req *http.Request) sentRequest {
	t.Helper()
	var body []byte
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(rc)
	}
	return sentRequest{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone(), ContentLength: req.ContentLength, Body: string(body)}
}

// TestKinValidateLeavesRequest: kinValidate hands the validator a shallow
// copy of the request, sharing its header map and URL; the request to be
// sent is the same afterwards, body included, whether the arguments leave
// out the defaulted values or give them. A validator that wrote a default
// (a header, the query, the body) into the shared parts would show here.
func TestKinValidateLeavesRequest(t *testing.T) {
	tl := prepareTool(t, "putItem")
	for _, args := range []string{`{"id":"a","body":{"s":"x"}}`, `{"id":"a/b","q":"v","X-Obj":"h","c":"k","body":{"n":1}}`} {
		typed := typedArgs(t, args)
		c := newCall(tl)
		r, err := c.serialize(typed)
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.newRequest(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		before := sentOf(t, req)
		if diags := c.kinValidate(t.Context(), req, r, typed); len(diags) > 0 {
			t.Fatalf("%s: kinValidate: %+v", args, diags)
		}
		if diff := cmp.Diff(before, sentOf(t, req)); diff != "" {
			t.Errorf("%s: the request changed under kinValidate (-before +after):\n%s", args, diff)
		}
		if body, _ := io.ReadAll(req.Body); !bytes.Equal(body, r.body) {
			t.Errorf("%s: the request's body reads %q after kinValidate; want %q", args, body, r.body)
		}
	}
}

// TestPrepareAllocs bounds what preparing one call of a GET with a path
// parameter (the catalog's getProduct) allocates: the call, its
// serialized request, the HTTP request and kin-openapi's validation.
// Copying each parameter into the call, or cloning the request for the
// validator, is over the bound.
func TestPrepareAllocs(t *testing.T) {
	tl := prepareTool(t, "getProduct")
	typed := typedArgs(t, `{"productId":"p-0001"}`)
	ctx := t.Context()
	prepare := func() {
		c := newCall(tl)
		r, err := c.serialize(typed)
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.newRequest(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if diags := c.kinValidate(ctx, req, r, typed); len(diags) > 0 {
			t.Fatal(diags)
		}
	}
	prepare()
	// 29 with a Clone for the validator, the parameters copied,
	// escapeStrict always building and a kin route made per call.
	bound := 21.0
	if raceEnabled {
		bound = 24
	}
	if got := testing.AllocsPerRun(200, prepare); got > bound {
		t.Errorf("preparing a getProduct call allocates %v objects; want at most %v", got, bound)
	}
}

// escapeStrictOracle is escapeStrict as it was before its fast path.
func escapeStrictOracle(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

var escapeSeeds = []string{"", "p-0001", "a.b_c~d", "a b", "/", "a/b", "é", "\x00", "\xff", "%", "..", "abc%2F", "x y/z?q=1&r#f", "AZaz09-._~"}

func TestEscapeStrictIsOracle(t *testing.T) {
	for _, s := range escapeSeeds {
		if got, want := escapeStrict(s), escapeStrictOracle(s); got != want {
			t.Errorf("escapeStrict(%q) = %q; want %q", s, got, want)
		}
	}
	if got := testing.AllocsPerRun(100, func() { _ = escapeStrict("p-0001") }); got != 0 {
		t.Errorf("escapeStrict of an unreserved value allocates %v objects; want 0", got)
	}
}

func FuzzEscapeStrict(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := escapeStrict(s), escapeStrictOracle(s); got != want {
			t.Errorf("escapeStrict(%q) = %q; want %q", s, got, want)
		}
	})
}

// TestNoCredentialsAllocs: an operation of a capability projected without
// credentials reads none on each call without making anything.
func TestNoCredentialsAllocs(t *testing.T) {
	tl := prepareTool(t, "getProduct")
	op := tl.Operation()
	if got := testing.AllocsPerRun(100, func() {
		if creds, err := op.Credentials(); err != nil || creds != nil {
			t.Fatal(creds, err)
		}
	}); got != 0 {
		t.Errorf("Credentials without any allocates %v objects; want 0", got)
	}
}
