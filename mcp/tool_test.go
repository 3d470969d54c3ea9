package mcp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/internal/openapitools"

	"github.com/kubepact/kubepact/fleetgraph/source"
)

// toolListBytes is the size of tools/list's tools as the wire carries them
// (compact JSON), in all and for the tools whose name keep selects.
func toolListBytes(t *testing.T, s *Server, keep func(string) bool) (all, kept int) {
	t.Helper()
	for _, tl := range listTools(t, s) {
		raw, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		all += len(raw)
		if keep(tl["name"].(string)) {
			kept += len(raw)
		}
	}
	return all, kept
}

func isFleetTool(name string) bool {
	return strings.HasPrefix(name, "pacto_fleet_") || name == "pacto_impact"
}

// TestToolListSize pins the fleet family's share of tools/list under
// 2,000 tokens (≈ bytes/4), error alternative included, and logs the
// whole list for the default server, the fleet family and the demo's
// configuration (authoring + capability + fleet, as hack/demo.sh runs it).
func TestToolListSize(t *testing.T) {
	const tokenBudget = 2000
	_, fleetOwn := toolListBytes(t, fleetServer2(t, []Family{FamilyFleet}), isFleetTool)
	if fleetOwn/4 > tokenBudget {
		t.Errorf("fleet family tools/list is %d bytes ≈ %d tokens, want ≤ %d tokens", fleetOwn, fleetOwn/4, tokenBudget)
	}
	defAll, _ := toolListBytes(t, newTestServer(t, nil), isFleetTool)
	demoAll, _ := toolListBytes(t, fleetServer2(t, []Family{FamilyAuthoring, FamilyCapability, FamilyFleet}), isFleetTool)
	t.Logf("tools/list: default server %d bytes ≈ %d tokens; fleet family %d bytes ≈ %d tokens; demo configuration %d bytes ≈ %d tokens",
		defAll, defAll/4, fleetOwn, fleetOwn/4, demoAll, demoAll/4)
}

// fleetServer2 serves families over the example bundles' fleet; with the
// capability family, the catalog bundle's generated tools too.
func fleetServer2(t *testing.T, families []Family) *Server {
	t.Helper()
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Freshness: 24 * time.Hour, Retention: time.Minute})
	source.NewFeed(b, []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.TargetStateSource{Path: "../examples/fleet/targets.yaml"},
	}).Collect(t.Context(), nil)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	opts := &Options{Workspace: root, Families: families, Fleet: FleetOptions{Enabled: true, Builder: b}}
	for _, f := range families {
		if f == FamilyCapability {
			return capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: "http://127.0.0.1:8080"}, opts)
		}
	}
	return newTestServer(t, opts)
}
