package openapitools

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
)

func loadExample(t *testing.T, name string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir("../../examples/bundles/"+name, nil)
	if err != nil {
		t.Fatalf("loading example %s: %v", name, err)
	}
	return b
}

func TestProjectExamples(t *testing.T) {
	for _, tc := range []struct {
		bundle      string
		allowWrites bool
		tools       []string
		withheld    []string
	}{
		{bundle: "catalog", tools: []string{"getHealth", "listProducts", "getProduct"}, withheld: []string{"createProduct", "replaceProduct", "deleteProduct", "adjustStock"}},
		{bundle: "catalog", allowWrites: true, tools: []string{"getHealth", "listProducts", "createProduct", "getProduct", "replaceProduct", "deleteProduct", "adjustStock"}},
		{bundle: "payments", tools: []string{"getPayment"}, withheld: []string{"refundPayment"}},
		{bundle: "orders"},
	} {
		t.Run(tc.bundle, func(t *testing.T) {
			c, err := Project(t.Context(), loadExample(t, tc.bundle), &Options{AllowWrites: tc.allowWrites})
			if err != nil {
				t.Fatalf("Project: %v", err)
			}
			var got, gotWithheld []string
			for _, tl := range c.Tools {
				got = append(got, tl.Name)
				var s map[string]any
				if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
					t.Errorf("%s: input schema is not JSON: %v", tl.Name, err)
				}
			}
			for _, w := range c.Withheld {
				gotWithheld = append(gotWithheld, w.Name)
			}
			if diff := cmp.Diff(got, tc.tools); diff != "" {
				t.Errorf("tools (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(gotWithheld, tc.withheld); diff != "" {
				t.Errorf("withheld (-got +want):\n%s", diff)
			}
			t.Logf("warnings: %q", c.Warnings)
			for _, tl := range c.Tools {
				t.Logf("%s %s", tl.Name, tl.InputSchema)
			}
		})
	}
}

// TestProjectJSONDocument: a JSON document is read as JSON (an escaped
// surrogate pair is one character, which YAML would refuse) and its
// operations keep the order the text gives them.
func TestProjectJSONDocument(t *testing.T) {
	doc := `{"openapi": "3.0.3", "servers": [{"url": "http://127.0.0.1:1"}], "paths": {
	  "/zeta": {"get": {"operationId": "zeta", "summary": "Launch \ud83d\ude80"}},
	  "/alpha": {"post": {"operationId": "alphaPost"}, "get": {"operationId": "alphaGet"}}}}`
	for _, name := range []string{"spec.json", "spec.txt"} {
		fsys := fstest.MapFS{name: {Data: []byte(doc)}}
		c, err := project(t.Context(), fsys, []spec{{name: "api", file: name}}, &Options{AllowWrites: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, tl := range c.Tools {
			got = append(got, tl.Name)
		}
		if diff := cmp.Diff([]string{"zeta", "alphaPost", "alphaGet"}, got); diff != "" {
			t.Errorf("%s: tool order (-want +got):\n%s", name, diff)
		}
		if tl := c.Tool("zeta"); tl == nil || tl.Title != "Launch 🚀" {
			t.Errorf("%s: zeta's title is not decoded: %+v", name, tl)
		}
	}
}

// Withheld reasons and warnings name option fields, never a command's
// flags: the options may come from a resource as well as from flags, and
// whoever shows them maps the fields to its own names (FlagNames).
func TestReasonsNameOptionFields(t *testing.T) {
	c := projectStyles(t, &Options{AllowOperations: []string{"simplePath", "search", "echoJSON"}, DenyOperations: []string{"simplePath"}})
	want := map[string]string{
		WithheldDenied:           "named in DenyOperations",
		WithheldNotAllowed:       "not named in AllowOperations",
		WithheldWritesNotAllowed: "POST is not a read-only method; AllowWrites exposes it",
	}
	seen := map[string]bool{}
	for _, w := range c.Withheld {
		if r, ok := want[w.Code]; ok {
			seen[w.Code] = true
			if w.Reason != r {
				t.Errorf("%s withheld as %s: reason %q, want %q", w.Name, w.Code, w.Reason, r)
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("withheld codes seen %v, want all of %v", seen, want)
	}
	wantWarnings := []string{
		`skipped 1 mutating operation(s) in interface "styles" (AllowWrites exposes them)`,
		`withheld 15 operation(s) in interface "styles" by AllowOperations or DenyOperations`,
	}
	if diff := cmp.Diff(c.Warnings, wantWarnings); diff != "" {
		t.Errorf("warnings (-got +want):\n%s", diff)
	}
}
