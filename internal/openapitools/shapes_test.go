package openapitools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
)

// TestShapes reads the catalog example without a base URL or any exposure
// policy: every operation, its request parts and declared responses.
func TestShapes(t *testing.T) {
	b, err := bundle.LoadDir("../../examples/bundles/catalog", nil)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := Shapes(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Method string
		Params, Body bool
		Responses    []string // status:mediaType
	}
	var got []row
	for _, s := range shapes {
		if s.Problem != "" {
			t.Errorf("%s: %s", s.Name, s.Problem)
		}
		r := row{Name: s.Name, Method: s.Method, Params: s.Parameters != nil, Body: s.Body != nil}
		for _, rs := range s.Responses {
			r.Responses = append(r.Responses, rs.Status+":"+rs.MediaType)
		}
		got = append(got, r)
	}
	want := []row{
		{"getHealth", "GET", false, false, []string{"200:"}},
		{"listProducts", "GET", true, false, []string{"200:application/json", "400:application/json"}},
		{"createProduct", "POST", true, true, []string{"201:application/json", "409:application/json"}},
		{"getProduct", "GET", true, false, []string{"200:application/json", "404:application/json"}},
		{"replaceProduct", "PUT", true, true, []string{"200:application/json", "404:application/json"}},
		{"deleteProduct", "DELETE", true, false, []string{"204:", "404:application/json"}},
		{"adjustStock", "PATCH", true, true, []string{"200:application/json", "404:application/json", "409:application/json"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
