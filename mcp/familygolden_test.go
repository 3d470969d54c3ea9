package mcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestToolListGoldenFamilies pins the tool list of every family beside the
// authoring one (tools.golden.json): the fleet tools, the catalog tool, and the generated tools
// of each example bundle with and without --allow-writes. Each server serves
// that family alone. Regenerate with
// go test ./mcp -run TestToolListGolden -update, and review the diff.
func TestToolListGoldenFamilies(t *testing.T) {
	configs := map[string]func() *Server{
		"fleet": func() *Server {
			b := fleetgraph.NewBuilder(nil)
			source.NewFeed(b, []source.Source{
				&source.LocalSource{Dir: "../examples/bundles"},
				&source.TargetStateSource{Path: "../examples/fleet/targets.yaml"},
			}).Collect(t.Context(), nil)
			return newTestServer(t, &Options{Families: []Family{FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: b}})
		},
		// The operator's /mcp: the fleet family with fleet-only
		// references (pacto_impact's arguments say what they accept).
		"fleet-operator": func() *Server {
			return newTestServer(t, &Options{Families: []Family{FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: fleetgraph.NewBuilder(nil)}, FleetRefsOnly: true})
		},
		"catalog": func() *Server { return catalogServer(t) },
	}
	// Each bundle at its spec's own loopback server URL, as `kubepact mcp
	// BUNDLE` serves it without --base-url.
	for _, name := range []string{"catalog", "orders", "payments"} {
		for _, writes := range []bool{false, true} {
			label := "capability-" + name
			if writes {
				label += "-writes"
			}
			configs[label] = func() *Server {
				return capabilityServer(t, "../examples/bundles/"+name, &openapitools.Options{AllowWrites: writes}, nil)
			}
		}
	}
	for label, build := range configs {
		t.Run(label, func(t *testing.T) {
			got, err := json.MarshalIndent(listTools(t, build()), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "tools", label+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./mcp -run TestToolListGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("tool list differs from %s (-got +want):\n%s", golden, cmp.Diff(string(got), string(want)))
			}
		})
	}
}
