package invoke

import (
	"net/http"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestWireCheckOf31 checks that kin-openapi's check of an OpenAPI 3.1
// operation, against the wire route projection builds, still refuses what
// it must: a value that does not decode to its declared type.
func TestWireCheckOf31(t *testing.T) {
	cp := projectTestdata(t, "tree", "circular31.yaml", &openapitools.Options{BaseURL: "http://127.0.0.1:9", AllowWrites: true})
	c := newCall(cp.Tool("getThing"))
	tests := []struct {
		name  string
		query string
		want  int // diagnostics
	}{
		{"valid", "n=1", 0},
		{"absent optional", "", 0},
		{"not an integer on the wire", "n=one", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:9/things/abc?"+tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			diags := c.kinValidate(t.Context(), req, &request{pathParams: map[string]string{"id": "abc"}}, nil)
			if len(diags) != tc.want {
				t.Errorf("diagnostics = %+v, want %d", diags, tc.want)
			}
			for _, d := range diags {
				if d.Code != DiagRequestInvalid || d.Field != "n" {
					t.Errorf("diagnostic %+v, want %s on n", d, DiagRequestInvalid)
				}
			}
		})
	}
}
