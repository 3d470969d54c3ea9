package fleetgraph_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/traces"
)

// observedFleet is testFleet with the shop fixture's observed edges.
func observedFleet(t *testing.T) (*fleetgraph.Builder, *fleetgraph.Snapshot) {
	t.Helper()
	b, before := testFleet(t)
	a := traces.NewAccumulator(traces.Limits{})
	f, err := os.Open(filepath.Join("testdata", "traces", "shop.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := a.ReadJSON(f); err != nil {
		t.Fatal(err)
	}
	b.SetObserved(a.Observed())
	s := b.Flush()
	if s.ID() == before.ID() {
		t.Fatal("the observed set did not change the snapshot id")
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return b, s
}

func limitationCodes(m fleetgraph.Meta) string {
	var out []string
	for _, l := range m.Limitations {
		out = append(out, l.Code)
	}
	return strings.Join(out, ",")
}

func TestGraphIncludeObserved(t *testing.T) {
	_, s := observedFleet(t)
	res, err := s.Graph(fleetgraph.GraphQuery{Service: "orders", IncludeObserved: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "graph-observed-orders", res)
	// orders reaches payments and catalog; the edges seen from those
	// nodes are orders -> payments (twice) and payments -> catalog, both
	// declared too.
	if len(res.Observed) != 2 || res.Observed[0].ToService != "payments" || res.Observed[0].Calls != 2 || res.Observed[1].FromService != "payments" {
		t.Errorf("observed %+v: want orders -> payments x2 and payments -> catalog", res.Observed)
	}
	for _, r := range res.Observed {
		if r.Provenance != fleetgraph.ProvenanceDeclaredObserved {
			t.Errorf("%s -> %s: provenance %s, want %s", r.FromService, r.ToService, r.Provenance, fleetgraph.ProvenanceDeclaredObserved)
		}
	}
	if !strings.Contains(limitationCodes(res.Meta), fleetgraph.LimitObservedIdentityUnresolved) {
		t.Errorf("limitations %s: want %s for ghost", limitationCodes(res.Meta), fleetgraph.LimitObservedIdentityUnresolved)
	}
	// Dependents of catalog: payments (declared and seen) and search (seen only).
	res, err = s.Graph(fleetgraph.GraphQuery{Service: "catalog", Direction: fleetgraph.DirectionDependents, IncludeObserved: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Observed {
		got[r.FromService] = r.Provenance
	}
	if got["payments"] != fleetgraph.ProvenanceDeclaredObserved || got["search"] != fleetgraph.ProvenanceObserved {
		t.Errorf("observed callers of catalog %v", got)
	}
	// Without include_observed the answer is what it was.
	res, err = s.Graph(fleetgraph.GraphQuery{Service: "orders"})
	if err != nil || res.Observed != nil {
		t.Errorf("graph without include_observed: observed %+v, %v", res.Observed, err)
	}
}

func TestStatusObservedFlags(t *testing.T) {
	_, s := observedFleet(t)
	res, err := s.Status(fleetgraph.StatusQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Observed == nil {
		t.Fatal("no observed section")
	}
	golden(t, "status-observed", res.Observed)
	flags := map[string]string{}
	for _, f := range res.Observed.Flags {
		flags[f.FromService+"->"+f.ToService] = f.Code
	}
	if flags["search->catalog"] != fleetgraph.CodeObservedUndeclared {
		t.Errorf("search -> catalog: %q, want %s", flags["search->catalog"], fleetgraph.CodeObservedUndeclared)
	}
	if flags["orders->catalog"] != fleetgraph.CodeDeclaredUnobserved {
		t.Errorf("orders -> catalog: %q, want %s", flags["orders->catalog"], fleetgraph.CodeDeclaredUnobserved)
	}
	if _, ok := flags["orders->payments"]; ok {
		t.Error("orders -> payments is declared and observed, yet flagged")
	}
	if res.Observed.Untraced == 0 {
		t.Error("untraced 0: billing and ledger declare dependencies and are never traced")
	}
	// A snapshot without observed edges has no section.
	_, plain := testFleet(t)
	if res, _ := plain.Status(fleetgraph.StatusQuery{}); res.Observed != nil {
		t.Errorf("no observed source, yet a section: %+v", res.Observed)
	}
}

// TestObservedObeysScope: a reader who sees only production-us sees the
// search service, not catalog; the observed search -> catalog edge is not
// shown, and no limitation names a service the reader may not see.
func TestObservedObeysScope(t *testing.T) {
	_, s := observedFleet(t)
	v := s.Restrict(fleetgraph.OnlyScopes("production-us"))
	res, err := v.Graph(fleetgraph.GraphQuery{Service: "search", IncludeObserved: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || len(res.Observed) != 0 {
		t.Fatalf("found %v, observed %+v: want search and no observed edge", res.Found, res.Observed)
	}
	st, err := v.Status(fleetgraph.StatusQuery{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(struct {
		G *fleetgraph.GraphResult
		S *fleetgraph.StatusResult
	}{res, st})
	for _, hidden := range []string{"catalog", "orders", "payments", "ghost"} {
		if strings.Contains(string(raw), `"`+hidden) || strings.Contains(string(raw), ": "+hidden) || strings.Contains(string(raw), " "+hidden+",") {
			t.Errorf("the restricted answer names %s: %s", hidden, raw)
		}
	}
	if st.Observed == nil || st.Observed.Edges != 0 || len(st.Observed.Flags) != 0 {
		t.Errorf("restricted observed status %+v", st.Observed)
	}
}

// TestImpactObserved: with observed edges, a declared consumer also seen
// calling is corroborated, and a caller that declares nothing (ghost is
// not in the fleet; search calls catalog, not payments) is listed only
// when it resolves. Per-call observed edges (ImpactOptions.Observed)
// replace the snapshot's.
func TestImpactObserved(t *testing.T) {
	_, s := observedFleet(t)
	older, err := bundle.LoadDir("../examples/bundles/payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := bundle.LoadDir("testdata/impact/payments-v4", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Impact(t.Context(), older, newer, &fleetgraph.ImpactOptions{IncludeObserved: true})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]fleetgraph.Consumer{}
	for _, c := range got.Consumers {
		byName[c.Service] = c
	}
	if c := byName["orders"]; c.Provenance != fleetgraph.ProvenanceDeclaredObserved || c.Confidence != fleetgraph.ConfidenceCorroborated {
		t.Errorf("orders: provenance %s confidence %s, want declared+observed, corroborated", c.Provenance, c.Confidence)
	}
	if strings.Contains(limitationCodes(got.Meta), fleetgraph.LimitObservedUnavailable) {
		t.Errorf("limitations %s: observed edges are configured", limitationCodes(got.Meta))
	}
	// Per call: search seen calling payments makes it a shadow consumer.
	shadow := fleetgraph.NewObserved([]fleetgraph.ObservedEdge{{From: "search", To: "payments", Calls: 3}}, "")
	got, err = s.Impact(t.Context(), older, newer, &fleetgraph.ImpactOptions{Observed: shadow})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "impact-payments-v4-observed", got)
	found := false
	for _, c := range got.Consumers {
		switch c.Service {
		case "search":
			found = true
			if !c.Direct || c.Provenance != fleetgraph.ProvenanceObserved || c.Confidence != fleetgraph.ConfidenceObserved || c.CompatibilityVerdict != fleetgraph.VerdictUnknown {
				t.Errorf("search: %+v, want a direct observed shadow consumer with an unknown verdict", c)
			}
		case "orders":
			if c.Provenance != "declared" {
				t.Errorf("orders: provenance %s with per-call edges that do not include it, want declared", c.Provenance)
			}
		}
	}
	if !found {
		t.Errorf("consumers %+v: want search as a shadow consumer", got.Consumers)
	}
}
