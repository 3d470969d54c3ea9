package openapitools

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzProject feeds arbitrary documents to the projection: none may make it
// panic, and every tool it exposes must have an input schema that
// jsonschema-go resolves.
func FuzzProject(f *testing.F) {
	for _, name := range []string{"styles.yaml", "naming.yaml", "circular31.yaml", "quirks30.yaml", "swagger2.json"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		"openapi: 3.0.0\nservers: [{url: 'http://127.0.0.1'}]\npaths: {/a: {get: {parameters: [{$ref: '#/x'}]}}}",
		"openapi: 3.1.0\nservers: [{url: 'http://127.0.0.1'}]\npaths: {/a: {$ref: '#/paths/~1a'}}",
		"openapi: 3.1.0\nservers: [{url: 'http://127.0.0.1'}]\npaths: {/a: {post: {requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/A'}}}}}}}\ncomponents: {schemas: {A: {$ref: '#/components/schemas/A'}}}",
		"openapi: 3.0.0\nservers: [{url: 'http://127.0.0.1'}]\npaths: {'/{a}': {get: {parameters: [{name: a, in: path, schema: {type: [1, 2]}}]}}}",
		"swagger: '2.0'\nhost: x\npaths: {/a: {get: {parameters: [{name: b, in: body, schema: {$ref: '#/definitions/B'}}]}}}",
		`{"openapi":"3.0.0","servers":[{"url":"http://127.0.0.1"}],"paths":{"/a":{"get":{"operationId":"pacto_x"},"put":{"operationId":"` + strings.Repeat("é", 100) + `"}}}}`,
		"openapi: 3.0.0\nservers: [{url: 'http://127.0.0.1'}]\npaths: {/a: {get: {parameters: [{name: x, in: query, content: {}}]}}}",
		"openapi: 3.0.0\nservers: [{url: 'http://127.0.0.1'}]\npaths: {/a: {get: {parameters: [{name: x, in: query, schema: {pattern: '('}}]}}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"spec.yaml": {Data: data}}
		var c *Capability
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, err = project(t.Context(), fsys, []spec{{name: "f", file: "spec.yaml"}}, &Options{AllowWrites: true})
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("projection took more than 10s")
		}
		if err != nil {
			return
		}
		for _, tl := range c.Tools {
			var s jsonschema.Schema
			if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
				t.Fatalf("%s: schema is not JSON: %v", tl.Name, err)
			}
			if _, err := s.Resolve(nil); err != nil {
				t.Fatalf("%s: schema does not resolve: %v", tl.Name, err)
			}
			if reserved(tl.Name) || len(tl.Name) > MaxNameLength || tl.Name == "" {
				t.Fatalf("bad tool name %q", tl.Name)
			}
		}
	})
}

// largeSpec generates an OpenAPI 3.0 document with n paths, each with a
// GET (path, query and header parameters) and a POST (a $ref body).
func largeSpec(n int) []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: big, version: '1'}\nservers: [{url: 'http://127.0.0.1:1'}]\npaths:\n")
	for i := range n {
		fmt.Fprintf(&b, "  /r%d/{id}:\n    parameters: [{name: id, in: path, required: true, schema: {type: integer}}]\n", i)
		fmt.Fprintf(&b, "    get:\n      operationId: get%d\n      summary: get resource %d\n      parameters:\n", i, i)
		b.WriteString("        - {name: q, in: query, schema: {type: string, maxLength: 20}}\n        - {name: tags, in: query, schema: {type: array, items: {type: string}}}\n        - {name: X-Req, in: header, schema: {type: string}}\n")
		b.WriteString("      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Item'}}}}}\n")
		fmt.Fprintf(&b, "    post:\n      operationId: post%d\n      requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/Item'}}}}\n      responses: {'201': {description: created}}\n", i)
	}
	b.WriteString("components:\n  schemas:\n    Item:\n      type: object\n      required: [name]\n      properties:\n        name: {type: string, nullable: true}\n        children: {type: array, items: {$ref: '#/components/schemas/Item'}}\n        price: {type: number, minimum: 0, exclusiveMinimum: true}\n")
	return []byte(b.String())
}

func BenchmarkProject500(b *testing.B) {
	fsys := fstest.MapFS{"big.yaml": {Data: largeSpec(250)}}
	b.ReportAllocs()
	for b.Loop() {
		c, err := project(b.Context(), fsys, []spec{{name: "big", file: "big.yaml"}}, &Options{AllowWrites: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Tools) != 500 {
			b.Fatalf("%d tools", len(c.Tools))
		}
	}
}
