package fleetgraph_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"

	"github.com/kubepact/kubepact/bundle/diff"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testAsOf is the clock of every test snapshot: payments' production-eu
// evidence (2026-07-29) is stale under a 24h window.
var testAsOf = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// testFleet builds the fleet of examples/bundles, testdata/bundles and
// testdata/targets.yaml.
func testFleet(t testing.TB) (*fleetgraph.Builder, *fleetgraph.Snapshot) {
	t.Helper()
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }, Freshness: 24 * time.Hour})
	snap := source.NewFeed(b, []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.LocalSource{Dir: "testdata/bundles"},
		&source.TargetStateSource{Path: "testdata/targets.yaml"},
	}).Collect(t.Context(), nil)
	if err := snap.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return b, snap
}

// golden compares v, as indented JSON, with testdata/golden/name.json.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestGoldenQueries(t *testing.T) {
	_, s := testFleet(t)
	tests := []struct {
		name string
		run  func() (any, error)
	}{
		{"search-all", func() (any, error) { return s.Search(fleetgraph.SearchQuery{}) }},
		{"search-text", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Text: "pay"}) }},
		{"search-owner", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Owner: "finance-core"}) }},
		{"search-status", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Status: fleetgraph.StatusNonCompliant}) }},
		{"search-compliance", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Compliance: fleetgraph.StatusWarning}) }},
		{"search-source", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Source: "local:testdata/bundles"}) }},
		{"search-scope", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Scope: "production-us"}) }},
		{"search-workload", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Workload: "service"}) }},
		{"search-capability", func() (any, error) { return s.Search(fleetgraph.SearchQuery{HasCapability: "health"}) }},
		{"search-dependency", func() (any, error) { return s.Search(fleetgraph.SearchQuery{HasDependency: "catalog"}) }},
		{"search-ready", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Ready: true}) }},
		{"search-not-ready-scope", func() (any, error) { return s.Search(fleetgraph.SearchQuery{NotReady: true, Scope: "production-eu"}) }},
		{"search-labels", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Labels: "env=production,region"}) }},
		{"search-page1", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Limit: 2}) }},
		{"get-service", func() (any, error) { return s.Get(fleetgraph.GetQuery{Service: "payments"}) }},
		{"get-service-ambiguous-links", func() (any, error) { return s.Get(fleetgraph.GetQuery{Service: "ledger"}) }},
		{"get-target-by-name", func() (any, error) { return s.Get(fleetgraph.GetQuery{Target: "commerce/orders"}) }},
		{"get-target-by-key", func() (any, error) {
			return s.Get(fleetgraph.GetQuery{Target: fleetgraph.TargetKey("staging", "kubernetes-workload", "commerce/payments")})
		}},
		{"get-miss", func() (any, error) { return s.Get(fleetgraph.GetQuery{Service: "paymnts"}) }},
		{"get-target-ambiguous-name", func() (any, error) { return s.Get(fleetgraph.GetQuery{Target: "commerce/payments"}) }},
		{"graph-orders", func() (any, error) { return s.Graph(fleetgraph.GraphQuery{Service: "orders", Transitive: true}) }},
		{"graph-catalog-dependents", func() (any, error) {
			return s.Graph(fleetgraph.GraphQuery{Service: "catalog", Direction: fleetgraph.DirectionDependents, Transitive: true})
		}},
		{"graph-cycle", func() (any, error) { return s.Graph(fleetgraph.GraphQuery{Service: "billing", Transitive: true}) }},
		{"graph-depth1", func() (any, error) { return s.Graph(fleetgraph.GraphQuery{Service: "billing"}) }},
		{"graph-max-nodes", func() (any, error) {
			return s.Graph(fleetgraph.GraphQuery{Service: "ledger", Transitive: true, MaxNodes: 2})
		}},
		{"graph-target", func() (any, error) {
			return s.Graph(fleetgraph.GraphQuery{Target: "commerce/orders", Transitive: true, MaxDepth: 1})
		}},
		{"graph-miss", func() (any, error) { return s.Graph(fleetgraph.GraphQuery{Revision: "orders@sha256:nope"}) }},
		{"status-default", func() (any, error) { return s.Status(fleetgraph.StatusQuery{}) }},
		{"status-stale", func() (any, error) { return s.Status(fleetgraph.StatusQuery{Stale: true}) }},
		{"status-unresolved", func() (any, error) { return s.Status(fleetgraph.StatusQuery{UnresolvedDeps: true, Unknown: true}) }},
		{"status-page", func() (any, error) { return s.Status(fleetgraph.StatusQuery{MissingReadiness: true, Limit: 2}) }},
		{"explain-service", func() (any, error) { return s.Explain(fleetgraph.ExplainQuery{Subject: "orders"}) }},
		{"explain-billing", func() (any, error) { return s.Explain(fleetgraph.ExplainQuery{Subject: "billing"}) }},
		{"explain-target", func() (any, error) { return s.Explain(fleetgraph.ExplainQuery{Subject: "finance/ledger"}) }},
		{"explain-miss", func() (any, error) { return s.Explain(fleetgraph.ExplainQuery{Subject: "ordres"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, got)
		})
	}
}

func TestGoldenImpact(t *testing.T) {
	_, s := testFleet(t)
	older, err := bundle.LoadDir("../examples/bundles/payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := bundle.LoadDir("testdata/impact/payments-v4", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Impact(t.Context(), older, newer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Classification != diff.Breaking || got.IncompatibleConsumers == 0 {
		t.Errorf("classification %s with %d incompatible consumers, want BREAKING with some", got.Classification, got.IncompatibleConsumers)
	}
	golden(t, "impact-payments-v4", got)
}
