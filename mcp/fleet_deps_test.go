package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// TestCreateResolvesDependenciesAgainstTheFleet: with the fleet family on,
// a bare dependency ref naming a fleet service becomes its registry ref,
// the default compatibility comes from its newest known version (payments
// is at 3.0.2, so ^3.0.0, not ^1.0.0), and a bare ref the fleet cannot
// resolve is refused with the candidates.
func TestCreateResolvesDependenciesAgainstTheFleet(t *testing.T) {
	b := fleetgraph.NewBuilder(nil)
	source.NewFeed(b, []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.LocalSource{Dir: "../fleetgraph/testdata/bundles"},
	}).Collect(t.Context(), nil)
	ws := t.TempDir()
	s := newTestServer(t, &Options{Workspace: ws, Families: []Family{FamilyAuthoring, FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: b}})
	cs := connect(t.Context(), t, s)

	res := fleetCall(t, cs, "pacto_create", map[string]any{"name": "checkout", "dependencies": []any{map[string]any{"ref": "payments"}}})
	if res.IsError {
		t.Fatalf("pacto_create with dependency payments: %s", text(res))
	}
	raw, err := os.ReadFile(filepath.Join(ws, "checkout", "pacto.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ref: oci://registry.example.com/kubepact-examples/payments", "compatibility: ^3.0.0"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("pacto.yaml lacks %q:\n%s", want, raw)
		}
	}
	if derived, _ := structured(t, res)["derived"].([]any); !strings.Contains(strings.Join(anyStrings(derived), "\n"), "the fleet service payments") {
		t.Errorf("derived does not say the ref was resolved: %v", derived)
	}

	for _, tc := range []struct {
		ref  string
		want []string
	}{
		{"paymnts", []string{"did you mean payments"}},
		{"orders", []string{"no registry reference"}},
	} {
		res := fleetCall(t, cs, "pacto_create", map[string]any{"name": "c-" + tc.ref, "dry_run": true, "dependencies": []any{map[string]any{"ref": tc.ref}}})
		got := text(res)
		if e, _ := structured(t, res)["error"].(map[string]any); e["field"] != "dependencies[0].ref" {
			t.Errorf("dependency ref %q: error %v; want field dependencies[0].ref", tc.ref, e)
		}
		for _, w := range tc.want {
			if !res.IsError || !strings.Contains(got, w) {
				t.Errorf("dependency ref %q: isError %v, %q; want an error containing %q", tc.ref, res.IsError, got, w)
			}
		}
	}

	// A full ref to a fleet service keeps its ref and gets the known
	// compatibility.
	res = fleetCall(t, cs, "pacto_edit", map[string]any{"path": "checkout", "add_dependencies": []any{map[string]any{"ref": "oci://registry.example.com/kubepact-examples/catalog"}}})
	if res.IsError {
		t.Fatalf("pacto_edit: %s", text(res))
	}
	raw, _ = os.ReadFile(filepath.Join(ws, "checkout", "pacto.yaml"))
	if !strings.Contains(string(raw), "compatibility: ^1.4.0") {
		t.Errorf("catalog's compatibility is not from its known version:\n%s", raw)
	}
}

func anyStrings(in []any) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}
