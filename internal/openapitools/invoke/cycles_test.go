package invoke

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestCyclicSchemaIsWithheldAndTreesWork projects testdata/cyclic-openapi.yaml:
// the schema of issue 10 that killed the process on the first call, beside
// a legitimate recursive schema, a tree of nodes.
func TestCyclicSchemaIsWithheldAndTreesWork(t *testing.T) {
	srv := newEcho(t)
	c, err := projectSpec(t, "cycles", "spec.yaml", testdata(t, "cyclic-openapi.yaml"), &openapitools.Options{BaseURL: srv.URL, AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tool("getA") != nil {
		t.Fatal("getA is exposed: its first call would overflow the validator's stack")
	}
	var w *openapitools.Withheld
	for i := range c.Withheld {
		if c.Withheld[i].Name == "getA" {
			w = &c.Withheld[i]
		}
	}
	if w == nil || w.Code != openapitools.WithheldUnsupported ||
		!strings.Contains(w.Reason, "spec.yaml#/components/schemas/A → spec.yaml#/components/schemas/B → spec.yaml#/components/schemas/A") ||
		!strings.Contains(w.Reason, "without descending into a property or an item") {
		t.Fatalf("getA withheld as %+v; want UNSUPPORTED naming the cycle A → B → A", w)
	}

	tree := c.Tool("postTree")
	if tree == nil {
		t.Fatalf("postTree (a tree of nodes) is not exposed; withheld: %+v", c.Withheld)
	}
	nest := func(levels int) string {
		return `{"body":` + strings.Repeat(`{"name":"n","children":[`, levels) + strings.Repeat(`]}`, levels) + `}`
	}
	if err := checkArgs(tree, nest(20)); err != nil {
		t.Fatalf("a tree 20 levels deep is refused by its schema: %v", err)
	}
	res, err := Call(t.Context(), tree, typedArgs(t, nest(20)))
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("a tree 20 levels deep: %v, %+v", err, res)
	}
	// A tree deeper than TooDeep allows is refused by the MCP server before
	// validation: mcp's TestGeneratedArgumentDepthIsBounded.
	if err := checkArgs(tree, nest(1000)); err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Fatalf("a tree 1000 levels deep: %v; want it too deep to validate", err)
	}
}

// checkArgs checks raw arguments as the MCP server's decoder does before
// CallChecked, with the tool's own schemas: each value within the depth
// TooDeep allows, then valid against its argument's schema. The fuzz test
// uses it to drive the validators with hostile values; the messages an
// agent reads are package mcp's, tested there.
func checkArgs(tl *openapitools.Tool, raw string) error {
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return err
	}
	schemas := tl.ArgumentSchemas()
	for name, v := range args {
		s := schemas[name]
		switch {
		case s == nil:
			return fmt.Errorf("%s: no such argument", name)
		case openapitools.TooDeep(v):
			return fmt.Errorf("%s: too deep", name)
		}
		if err := s.Validate(v); err != nil {
			return err
		}
	}
	return nil
}

// genCyclicSpec builds an OpenAPI document from fuzz bytes: up to eight
// component schemas, each joining one to three keywords that point at
// other schemas (allOf, anyOf, oneOf, not, if/then, properties, items,
// additionalProperties, a sibling $ref), so cycles guarded and unguarded
// and long chains all occur. A query parameter uses S0, the body the last.
func genCyclicSpec(data []byte) (string, []byte) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	n := 1 + int(next()%8)
	ref := func() string { return fmt.Sprintf("{$ref: '#/components/schemas/S%d'}", int(next())%n) }
	var b strings.Builder
	b.WriteString("openapi: 3.1.0\ninfo: {title: f, version: '1'}\nservers: [{url: 'http://127.0.0.1:1'}]\npaths:\n  /f:\n    post:\n      operationId: f\n")
	fmt.Fprintf(&b, "      parameters: [{name: q, in: query, schema: {$ref: '#/components/schemas/S0'}}]\n")
	fmt.Fprintf(&b, "      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/S%d'}}}}\n", n-1)
	b.WriteString("      responses: {'200': {description: ok}}\ncomponents:\n  schemas:\n")
	for i := range n {
		var kws []string
		for range 1 + int(next()%3) {
			switch next() % 10 {
			case 0:
				kws = append(kws, "allOf: ["+ref()+"]")
			case 1:
				kws = append(kws, "anyOf: ["+ref()+", {type: string}]")
			case 2:
				kws = append(kws, "oneOf: ["+ref()+", {type: integer}]")
			case 3:
				kws = append(kws, "not: "+ref())
			case 4:
				kws = append(kws, "if: {type: object}, then: "+ref())
			case 5:
				kws = append(kws, "type: object, properties: {p: "+ref()+"}")
			case 6:
				kws = append(kws, "items: "+ref())
			case 7:
				kws = append(kws, "additionalProperties: "+ref())
			case 8:
				kws = append(kws, "$ref: '#/components/schemas/S"+fmt.Sprint(int(next())%n)+"'")
			default:
				kws = append(kws, "type: string")
			}
		}
		fmt.Fprintf(&b, "    S%d: {%s}\n", i, strings.Join(kws, ", "))
	}
	return b.String(), data
}

// genValue builds an argument value from fuzz bytes: objects under "p" and
// arrays, nested as deep as the bytes say (up to 200 levels).
func genValue(data []byte) any {
	var v any = "leaf"
	for i, b := range data {
		if i >= 200 {
			break
		}
		switch b % 3 {
		case 0:
			v = map[string]any{"p": v, "x": 1}
		case 1:
			v = []any{v}
		default:
			v = map[string]any{"p": v}
		}
	}
	return v
}

// FuzzSchemaCycles projects generated specs with cyclic and deep $refs and
// checks every tool exposed against generated, deeply nested arguments
// (as the MCP server does), calling it when they pass. The
// process must survive: an overflow of the validator's stack is a fatal
// error the fuzzer reports as a crash. Run it with
//
//	go test ./internal/openapitools/invoke -run XXX -fuzz FuzzSchemaCycles -fuzztime 2m -parallel 1
func FuzzSchemaCycles(f *testing.F) {
	for _, seed := range [][]byte{
		{1, 1, 1, 1, 1, 0},       // two schemas, the anyOf/allOf shape
		{0, 0, 8, 0},             // a bare self-reference
		{2, 2, 5, 1, 6, 0, 5, 0}, // a tree: recursion through properties and items
		{7, 3, 0, 1, 3, 0, 2, 3, 0, 3, 1, 3, 0, 4, 1, 3, 0, 5, 1, 3, 0, 6, 1, 3, 0, 7, 1, 0, 0, 0, 0},
	} {
		f.Add(seed, []byte{0, 1, 2, 0, 1, 2})
	}
	f.Fuzz(func(t *testing.T, specBytes, argBytes []byte) {
		doc, _ := genCyclicSpec(specBytes)
		c, err := projectSpec(t, "f", "spec.yaml", []byte(doc), &openapitools.Options{AllowWrites: true, Timeout: time.Second})
		if err != nil {
			return
		}
		v := genValue(argBytes)
		for _, tl := range c.Tools {
			for _, args := range []map[string]any{{"q": v}, {"body": v}, {"q": "s", "body": map[string]any{"p": v}}} {
				raw, err := json.Marshal(args)
				if err != nil {
					t.Fatal(err)
				}
				if checkArgs(tl, string(raw)) == nil {
					_, _ = Call(t.Context(), tl, typedArgs(t, string(raw)))
				}
			}
		}
	})
}
