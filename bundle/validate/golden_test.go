package validate_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/test/pactocompat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// outcome is what a golden file records per bundle: valid or not, and each
// finding as "path: CODE". Messages are asserted elsewhere; keeping them out
// of the goldens keeps wording changes from churning these files.
type outcome struct {
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

func summarize(r validate.Result) outcome {
	o := outcome{Valid: r.Valid()}
	for _, f := range r.Errors {
		o.Errors = append(o.Errors, f.Path+": "+f.Code)
	}
	for _, f := range r.Warnings {
		o.Warnings = append(o.Warnings, f.Path+": "+f.Code)
	}
	return o
}

// compatOutcome is one compatibility bundle validated without a resolver
// (every ref unresolvable: policy refs fail closed) and with a resolver
// over the local copy of the demo bundles.
type compatOutcome struct {
	NoResolver   outcome `json:"noResolver"`
	WithResolver outcome `json:"withResolver"`
}

func checkGolden[T any](t *testing.T, name string, got T) {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantData, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (regenerate with go test ./bundle/validate -run %s -update): %v", t.Name(), err)
	}
	var want T
	if err := json.Unmarshal(wantData, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("outcomes differ from %s (-got +want); if the change is intended, rerun with -update:\n%s", path, diff)
	}
}

// TestCompatGolden validates every Pacto demo bundle. Where the copy lacks a
// referenced file the right answer is FILE_NOT_FOUND; the demo's OCI refs
// are not reachable offline, so without a resolver every policy ref is
// POLICY_REF_UNRESOLVED.
func TestCompatGolden(t *testing.T) {
	root := pactocompat.Demo(t)
	dirs := bundleDirs(t, root)
	if len(dirs) < 29 {
		t.Fatalf("found %d bundles in %s, want the 29 of the manifest", len(dirs), root)
	}
	got := map[string]compatOutcome{}
	for _, d := range dirs {
		fsys := os.DirFS(filepath.Join(root, filepath.FromSlash(d)))
		got[d] = compatOutcome{
			NoResolver:   summarize(validate.Validate(t.Context(), fsys, nil)),
			WithResolver: summarize(validate.Validate(t.Context(), fsys, &validate.Options{Resolver: compatResolver{root}})),
		}
	}
	checkGolden(t, "compat.golden.json", got)

	// Facts the manifest states, independent of the golden file.
	for _, d := range []string{"bundles/audit-log", "partners/platform-app-config", "bundles/pacto-demo", "bundles/postgresql", "bundles/redis", "bundles/platform-http-policy"} {
		if !got[d].NoResolver.Valid {
			t.Errorf("%s: complete bundle without refs is invalid: %v", d, got[d].NoResolver.Errors)
		}
	}
	for d, o := range got {
		for _, e := range o.NoResolver.Errors {
			if !strings.HasSuffix(e, ": FILE_NOT_FOUND") && !strings.HasSuffix(e, ": POLICY_REF_UNRESOLVED") {
				t.Errorf("%s: unexpected error %s; the demo bundles differ from valid only by absent files and unreachable refs", d, e)
			}
		}
	}
}

// TestExamplesGolden validates kubepact's own example bundles; every one of
// them must be valid.
func TestExamplesGolden(t *testing.T) {
	root := filepath.Join(repoRoot, "examples", "bundles")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no example bundles at %s yet", root)
	}
	dirs := bundleDirs(t, root)
	if len(dirs) == 0 {
		t.Skipf("no example bundles at %s yet", root)
	}
	got := map[string]outcome{}
	for _, d := range dirs {
		r := validate.Validate(t.Context(), os.DirFS(filepath.Join(root, filepath.FromSlash(d))), nil)
		got[d] = summarize(r)
		if !r.Valid() {
			t.Errorf("example %s is invalid: %+v", d, r.Errors)
		}
	}
	checkGolden(t, "examples.golden.json", got)
}
