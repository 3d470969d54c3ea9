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

// toolListSize is the size of tools/list's tools as the wire carries them
// (compact JSON), in bytes and in cl100k tokens, in all and for the tools
// whose name keep selects.
type toolListSize struct{ bytes, tokens, keptBytes, keptTokens int }

func toolListSizes(t *testing.T, s *Server, keep func(string) bool) toolListSize {
	t.Helper()
	var z toolListSize
	for _, tl := range listTools(t, s) {
		raw, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		n := tokens(t, string(raw))
		z.bytes, z.tokens = z.bytes+len(raw), z.tokens+n
		if keep(tl["name"].(string)) {
			z.keptBytes, z.keptTokens = z.keptBytes+len(raw), z.keptTokens+n
		}
	}
	return z
}

func isFleetTool(name string) bool {
	return strings.HasPrefix(name, "pacto_fleet_") || name == "pacto_impact"
}

// TestToolListSize pins the fleet family's share of tools/list under
// 2,000 cl100k tokens, error alternative included, and logs the whole
// list for the default server, the fleet family and the demo's
// configuration (authoring + capability + fleet, as hack/demo.sh runs it),
// with the bytes/4 estimate the budget used to be checked with beside it.
func TestToolListSize(t *testing.T) {
	const tokenBudget = 2000
	fleet := toolListSizes(t, fleetServer2(t, []Family{FamilyFleet}), isFleetTool)
	if fleet.keptTokens > tokenBudget {
		t.Errorf("fleet family tools/list is %d bytes, %d tokens; want ≤ %d tokens", fleet.keptBytes, fleet.keptTokens, tokenBudget)
	}
	def := toolListSizes(t, newTestServer(t, nil), isFleetTool)
	demo := toolListSizes(t, fleetServer2(t, []Family{FamilyAuthoring, FamilyCapability, FamilyFleet}), isFleetTool)
	t.Logf("tools/list (cl100k tokens; bytes/4 in parentheses): default server %d bytes, %d tokens (%d); fleet family %d bytes, %d tokens (%d); demo configuration %d bytes, %d tokens (%d)",
		def.bytes, def.tokens, def.bytes/4, fleet.keptBytes, fleet.keptTokens, fleet.keptBytes/4, demo.bytes, demo.tokens, demo.bytes/4)
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
