package openapischema

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const petstore30 = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /pets:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
      responses:
        "200": {description: ok}
components:
  schemas:
    Pet:
      type: object
      x-internal: true
      required: [id, name]
      properties:
        id: {type: integer, readOnly: true}
        name: {type: string, nullable: true, example: rex}
        parent: {$ref: "#/components/schemas/Pet"}
`

// TestConverterRewritesOpenAPI30 converts an OpenAPI 3.0 schema: the
// reference (a cycle) lands in $defs once, nullable becomes a type list,
// example becomes examples, x- keywords and the readOnly property (never
// sent) are dropped, from properties and from required.
func TestConverterRewritesOpenAPI30(t *testing.T) {
	d, err := LoadDocument(fstest.MapFS{"api.yaml": {Data: []byte(petstore30)}}, "api.yaml", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != "3.0.3" || d.File() != "api.yaml" {
		t.Errorf("version %q, file %q", d.Version(), d.File())
	}
	if got := d.OperationsInOrder(); !cmp.Equal(got, [][2]string{{"/pets", "post"}}) {
		t.Errorf("operations %v", got)
	}
	c := NewConverter(d)
	got := c.Schema(map[string]any{"$ref": "#/components/schemas/Pet"}, "api.yaml", 0)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	raw, _ := json.Marshal(map[string]any{"schema": got, "$defs": c.Defs()})
	want := `{"$defs":{"Pet":{"properties":{"name":{"examples":["rex"],"type":["string","null"]},` +
		`"parent":{"$ref":"#/$defs/Pet"}},"required":["name"],"type":"object"}},"schema":{"$ref":"#/$defs/Pet"}}`
	if diff := cmp.Diff(string(raw), want); diff != "" {
		t.Errorf("converted (-got +want):\n%s", diff)
	}
	if o := c.Origin("#/$defs/Pet"); o != "api.yaml#/components/schemas/Pet" {
		t.Errorf("origin %q", o)
	}
}

// TestConverterKeepsTheFirstFailure: an unresolvable reference is an
// error the caller can show, and the conversion goes on without it.
func TestConverterKeepsTheFirstFailure(t *testing.T) {
	d, err := LoadDocument(fstest.MapFS{"api.yaml": {Data: []byte(petstore30)}}, "api.yaml", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConverter(d)
	c.Schema(map[string]any{"$ref": "#/components/schemas/Missing"}, "api.yaml", 0)
	if c.Err() == nil || !strings.Contains(c.Err().Error(), "Missing") {
		t.Errorf("error %v; want one naming the missing reference", c.Err())
	}
}

// TestLoadDocumentRefusesWhatIsNotOpenAPI: a document that declares
// neither openapi 3.x nor swagger 2.0 is refused with words, not parsed
// as something else.
func TestLoadDocumentRefusesWhatIsNotOpenAPI(t *testing.T) {
	_, err := LoadDocument(fstest.MapFS{"api.yaml": {Data: []byte("asyncapi: 3.0.0\n")}}, "api.yaml", 1<<20)
	if err == nil || !strings.Contains(err.Error(), "neither `openapi: 3.x` nor `swagger: \"2.0\"` is declared") {
		t.Errorf("error %v", err)
	}
}

// TestSortedKeys holds SortedKeys to the sort of the collected keys it
// replaces (nil for an empty map included), made in one allocation.
func TestSortedKeys(t *testing.T) {
	for _, m := range []map[string][]string{nil, {}, {"b": nil}, {"Content-Type": nil, "X-B": nil, "Date": nil, "Content-Length": nil, "a": nil}} {
		got, want := SortedKeys(m), slices.Sorted(maps.Keys(m))
		if (got == nil) != (want == nil) || !slices.Equal(got, want) {
			t.Errorf("SortedKeys(%v) = %#v; want %#v", m, got, want)
		}
	}
	hdr := map[string][]string{"Content-Type": nil, "Date": nil, "Content-Length": nil, "X-Request-Id": nil}
	if n := testing.AllocsPerRun(100, func() { SortedKeys(hdr) }); n != 1 {
		t.Errorf("SortedKeys of %d keys makes %.0f objects; want 1", len(hdr), n)
	}
}
