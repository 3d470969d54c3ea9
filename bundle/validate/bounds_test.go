package validate

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

// TestSchemaNumberBounds: a configuration schema holding a number whose
// exact value costs more than its bytes (the compiler makes a big.Rat of
// every minimum, maximum and multipleOf: 1e999999 is a million digits) is
// refused with a finding naming the number and the bound, before it is
// compiled; so is a policy schema.
func TestSchemaNumberBounds(t *testing.T) {
	const head = "pactoVersion: \"2.0\"\nservice: {name: s, version: 1.0.0}\n"
	for _, number := range []string{"1e999999", "1e999999999", "1" + strings.Repeat("0", 200000)} {
		schema := `{"type":"object","properties":{"n":{"type":"number","minimum":` + number + `}}}`
		files := fstest.MapFS{
			"pacto.yaml":  {Data: []byte(head + "configurations: [{name: app, schema: app.json, required: true, values: {n: 1}}]\npolicies: [{name: p, schema: policy.json}]\n")},
			"app.json":    {Data: []byte(schema)},
			"policy.json": {Data: []byte(`{"properties":{"service":{"multipleOf":` + number + `}}}`)},
		}
		res := Validate(t.Context(), files, nil)
		var got []string
		for _, f := range res.Errors {
			if strings.Contains(f.Message, "the number at properties.") && strings.Contains(f.Message, "at most 100 digits and an exponent of at most ±400") {
				got = append(got, f.Path)
			}
		}
		if len(got) != 2 || got[0] != "configurations[0].schema" || got[1] != "policies[0].schema" {
			t.Errorf("minimum %.20s: %+v; want findings at configurations[0].schema and policies[0].schema naming the bound", number, res.Errors)
		}
	}
}

// TestValidationStopped: validation whose ctx has ended stops between
// steps and says so: VALIDATION_STOPPED, "could not check", never a
// verdict from findings it did not finish collecting.
func TestValidationStopped(t *testing.T) {
	files := fstest.MapFS{"pacto.yaml": {Data: []byte("pactoVersion: \"2.0\"\nservice: {name: s, version: 1.0.0}\n")}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := Validate(ctx, files, nil)
	if res.Valid() || !res.CouldNotCheck() || len(res.Errors) != 1 || res.Errors[0].Code != CodeValidationStopped {
		t.Errorf("%+v; want one VALIDATION_STOPPED error, could-not-check", res)
	}
	if res := Validate(t.Context(), files, nil); !res.Valid() {
		t.Errorf("the same bundle with a live ctx: %+v", res)
	}
}
