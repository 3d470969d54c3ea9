package validate_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/bundle/validate"
)

// TestRefGrammarIsTheLoaders: a dependency ref is called well-formed by
// check exactly when the registry client, which pulls it, can parse it.
// Each ref below was accepted by check while the loader refused it, or the
// other way round, when the grammar was written twice.
func TestRefGrammarIsTheLoaders(t *testing.T) {
	hex := func(n int) string { return strings.Repeat("a", n) }
	for _, ref := range []string{
		"oci://ghcr.io/acme/payments:1.0.0",
		"oci://localhost:5000/payments@sha256:" + hex(64),
		"oci://ghcr.io/acme/payments@sha512:" + hex(128),
		"oci://ghcr.io/" + strings.Repeat("a", 260),     // over the 255-character name limit
		"oci://ghcr.io/acme/payments@sha384:" + hex(96), // an algorithm registries do not use
		"oci://127.0.0.1:0/payments",                    // no port 0
		"oci://ghcr.io:99999/payments",                  // nor a port over 65535
		"oci://Ghcr_io/payments",
		"oci://payments",
	} {
		src := head + "dependencies: [{name: d, ref: '" + ref + "', required: true, compatibility: ^1.0.0}]\n"
		res := validate.ValidateBytes(t.Context(), []byte(src), fstest.MapFS{}, nil)
		checkRefuses := false
		for _, f := range res.Errors {
			if f.Code == validate.CodeInvalidOCIRef {
				checkRefuses = true
			}
		}
		_, err := oci.ParseReference(ref)
		if loaderRefuses := err != nil; checkRefuses != loaderRefuses {
			t.Errorf("%s: check refuses it: %v, the loader refuses it: %v (%v)", ref, checkRefuses, loaderRefuses, err)
		}
	}
}
