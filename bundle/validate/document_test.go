package validate_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/test/pactocompat"
)

// Validating with the bundle's own decode of pacto.yaml finds exactly
// what decoding it again finds, messages included: on Pacto's demo
// bundles, kubepact's examples and the pacto 2.0 cases, and on documents
// that fail at each step (YAML, the generic tree, the schema, the typed
// model). A Document of other bytes is ignored, never trusted.
func TestDocumentSameFindings(t *testing.T) {
	type bundleCase struct {
		name string
		fsys fs.FS
		raw  []byte
	}
	var cases []bundleCase
	roots := []string{filepath.Join(repoRoot, "examples", "bundles"), filepath.Join("testdata", "pacto20")}
	demo, skip, err := pactocompat.Lookup()
	switch {
	case err != nil:
		t.Fatal(err)
	case skip != "":
		t.Log("without Pacto's demo bundles: " + skip)
	default:
		roots = append(roots, demo)
	}
	for _, root := range roots {
		for _, d := range bundleDirs(t, root) {
			fsys := os.DirFS(filepath.Join(root, filepath.FromSlash(d)))
			raw, err := fs.ReadFile(fsys, contract.FileName)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, bundleCase{root + "/" + d, fsys, raw})
		}
	}
	for i, doc := range []string{
		"pactoVersion: \"2.0\"\nservice: [unclosed\n",                     // YAML
		"pactoVersion: \"2.0\"\nservice: {name: a}\nservice: {name: b}\n", // the generic tree: a duplicate key
		"pactoVersion: \"2.0\"\nservice: {name: a}\n",                     // the schema: no version
		"pactoVersion: \"2.0\"\nservice: {name: a, version: 1.0.0}\nreadiness: {expires: 2099-01-01, claims: [{id: x, type: document, category: documentation, status: done, weight: 30.0}]}\n", // the typed model
		"pactoVersion: 2.0\nservice: {name: a, version: 1.0.0}\n",
	} {
		cases = append(cases, bundleCase{name: "doc" + string(rune('0'+i)), raw: []byte(doc)})
	}
	if len(cases) < 15 {
		t.Fatalf("%d cases: the corpora were not found", len(cases))
	}
	for _, c := range cases {
		want := validate.ValidateBytes(t.Context(), c.raw, c.fsys, nil)
		got := validate.ValidateBytes(t.Context(), c.raw, c.fsys, &validate.Options{Document: contract.ParseDocument(c.raw)})
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s: findings with the document (-got +want):\n%s", c.name, diff)
		}
		// A document of other bytes (here an empty mapping) is ignored.
		other := validate.ValidateBytes(t.Context(), c.raw, c.fsys, &validate.Options{Document: contract.ParseDocument([]byte("{}\n"))})
		if diff := cmp.Diff(other, want); diff != "" {
			t.Errorf("%s: a document of other bytes was used (-got +want):\n%s", c.name, diff)
		}
	}
}
