package validate_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/test/pactocompat"
)

// FuzzValidateBytes checks that no contract makes the validator panic or
// return an inconsistent result, with a bundle FS holding one spec of each
// kind and a resolver that hands back a policy bundle.
func FuzzValidateBytes(f *testing.F) {
	f.Add([]byte(head))
	f.Add([]byte(aliasBomb()))
	// Pacto's demo contracts seed it too when the optional compatibility
	// data is there.
	if demo, _, _ := pactocompat.Lookup(); demo != "" {
		for _, name := range []string{"bundles/api-gateway/v1.2.0", "bundles/audit-log", "bundles/auth-service", "partners/settlement-service"} {
			if data, err := os.ReadFile(filepath.Join(demo, name, "pacto.yaml")); err == nil {
				f.Add(data)
			}
		}
	}
	files := fstest.MapFS{
		"interfaces/openapi.yaml":   {Data: []byte(openAPISpec)},
		"interfaces/events.json":    {Data: []byte(asyncAPISpec)},
		"interfaces/auth.proto":     {Data: []byte(protoSpec)},
		"configuration/schema.json": {Data: []byte(configSchema)},
		"policy/schema.json":        {Data: []byte(`{"required": ["workload"]}`)},
	}
	opts := &validate.Options{Resolver: mapResolver{
		"oci://r.example/policy": fstest.MapFS{"pacto.yaml": {Data: []byte(head)}, "policy/schema.json": {Data: []byte(`{"required": ["metadata"]}`)}},
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := validate.ValidateBytes(t.Context(), data, files, opts)
		if r.Errors == nil || r.Warnings == nil {
			t.Fatalf("nil slice in result %+v", r)
		}
		for _, e := range append(r.Errors, r.Warnings...) {
			if e.Code == "" || e.Message == "" {
				t.Fatalf("finding without code or message: %+v", e)
			}
		}
	})
}
