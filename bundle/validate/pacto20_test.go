package validate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle/validate"
)

// retiredCodes are the five codes Pacto 2.0 no longer emits: their rules
// live in the JSON Schema and a breach is a SCHEMA_VIOLATION.
var retiredCodes = []string{
	validate.CodeInvalidInterfaceType, validate.CodeInterfaceRefRequired,
	validate.CodeInvalidCapabilityType, validate.CodeCapabilityRefRequired,
	validate.CodeUnsupportedPolicyTarget,
}

// TestPacto20Golden validates kubepact's own fixtures for the rules that
// moved inside format 2.0 (testdata/pacto20): each breach of a rule that
// once had a code of its own is a SCHEMA_VIOLATION at the field, and a
// service.version that is not one safe path component is refused by the
// schema.
func TestPacto20Golden(t *testing.T) {
	root := filepath.Join("testdata", "pacto20")
	got := map[string]outcome{}
	for _, d := range bundleDirs(t, root) {
		got[d] = summarize(validate.Validate(t.Context(), os.DirFS(filepath.Join(root, d)), nil))
	}
	if len(got) < 8 {
		t.Fatalf("found %d fixtures under %s, want 8", len(got), root)
	}
	checkGolden(t, "pacto20.golden.json", got)

	for d, o := range got {
		for _, f := range append(slices.Clone(o.Errors), o.Warnings...) {
			for _, c := range retiredCodes {
				if strings.HasSuffix(f, ": "+c) {
					t.Errorf("%s: emits retired code %s (Pacto 2.0 reports SCHEMA_VIOLATION)", d, c)
				}
			}
		}
		want := !strings.HasSuffix(d, "-ok")
		if o.Valid == want {
			t.Errorf("%s: valid=%v, want %v", d, o.Valid, !want)
		}
	}
}

// TestRetiredCodesFromTypedModel feeds the cross-field layer contracts the
// schema passes but the old rules refuse (a blank ref is one character
// long), so the layer's own checks answer: SCHEMA_VIOLATION, never a
// retired code.
func TestRetiredCodesFromTypedModel(t *testing.T) {
	for _, tc := range []struct{ name, src, path string }{
		{"blank interface ref", "pactoVersion: '2.0'\nservice: {name: svc, version: 1.0.0}\ninterfaces:\n  - {name: api, type: openapi, ref: ' '}\n", "interfaces[0].ref"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validate.ValidateBytes(t.Context(), []byte(tc.src), nil, nil)
			if len(r.Errors) != 1 || r.Errors[0].Code != validate.CodeSchemaViolation || r.Errors[0].Path != tc.path {
				t.Fatalf("errors %+v, want one SCHEMA_VIOLATION at %s", r.Errors, tc.path)
			}
		})
	}
}
