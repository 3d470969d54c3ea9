package fleetgraph_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
)

// hubFleet is a fleet where one service, pay, is depended on by direct
// consumers, each of which has a consumer of its own: a hub whose
// dependents, impact and attention lists are far above a page.
func hubFleet(t *testing.T, direct int) (*fleetgraph.Builder, *fleetgraph.Snapshot) {
	t.Helper()
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	const domain = "registry.example.com/shop"
	dep := func(name, compat string) fleetgraph.Edge {
		return fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: name, Ref: "oci://" + domain + "/" + name, Required: true, Compatibility: compat}
	}
	n := 0
	upsert := func(name string, edges ...fleetgraph.Edge) {
		n++
		if err := b.UpsertRevision(&fleetgraph.Revision{Domain: domain, Name: name, Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", n), Source: "test", Edges: edges}); err != nil {
			t.Fatal(err)
		}
	}
	upsert("pay")
	ranges := []string{"^1.0.0", "~1.0.0", ""}
	for i := range direct {
		c := fmt.Sprintf("consumer-%04d", i)
		// Every tenth also names a dependency that is in no snapshot: an
		// unresolved edge (and a status item).
		edges := []fleetgraph.Edge{dep("pay", ranges[i%3])}
		if i%10 == 0 {
			edges = append(edges, dep(fmt.Sprintf("missing-%04d", i), "^1.0.0"))
		}
		upsert(c, edges...)
		upsert(fmt.Sprintf("downstream-%04d", i), dep(c, "^1.0.0"))
	}
	return b, b.Flush()
}

func encodedSize(t *testing.T, v any) int {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var qe *fleetgraph.QueryError
	if !errors.As(err, &qe) || qe.Code != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// A hub's transitive dependents do not fit one answer: each page stays
// within its byte budget, the pages together list the whole walk once,
// nearest first, and each edge comes no earlier than both of its nodes.
func TestGraphPagesWithinBudget(t *testing.T) {
	b, s := hubFleet(t, 600)
	q := fleetgraph.GraphQuery{Service: "pay", Direction: fleetgraph.DirectionDependents, Transitive: true, MaxNodes: fleetgraph.MaxMaxNodes}
	var nodes []fleetgraph.GraphNode
	var edges, unresolved int
	seen := map[string]bool{}
	pages := 0
	var first *fleetgraph.GraphResult
	for cur := ""; ; {
		q.Cursor = cur
		res, err := s.Graph(q)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		pages++
		if n := encodedSize(t, res); n > fleetgraph.DefaultMaxBytes {
			t.Errorf("page %d is %d bytes, above the budget %d", pages, n, fleetgraph.DefaultMaxBytes)
		}
		if res.Total != first.Total {
			t.Errorf("page %d totals %v, page 1 said %v", pages, res.Total, first.Total)
		}
		for _, n := range res.Nodes {
			seen[n.Key] = true
		}
		for _, e := range res.Edges {
			if !seen[e.FromService] || !seen[e.ToService] {
				t.Errorf("page %d lists edge %s → %s before one of its nodes", pages, e.FromService, e.ToService)
			}
		}
		nodes = append(nodes, res.Nodes...)
		edges += len(res.Edges)
		unresolved += len(res.Unresolved)
		if (res.Remaining == nil) != (res.NextCursor == "") {
			t.Errorf("page %d: remaining %v with cursor %q", pages, res.Remaining, res.NextCursor)
		}
		if res.NextCursor == "" {
			break
		}
		cur = res.NextCursor
	}
	if pages < 3 {
		t.Fatalf("%d pages: the fleet should not fit in fewer than 3", pages)
	}
	want := fleetgraph.GraphTotals{Nodes: 1201, Edges: 1200, Unresolved: 0}
	if first.Total != want {
		t.Errorf("totals %v, want %v", first.Total, want)
	}
	if len(nodes) != first.Total.Nodes || edges != first.Total.Edges || unresolved != first.Total.Unresolved {
		t.Errorf("pages listed %d nodes, %d edges, %d unresolved; totals say %v", len(nodes), edges, unresolved, first.Total)
	}
	keys := map[string]bool{}
	for i, n := range nodes {
		if keys[n.Key] {
			t.Errorf("node %s listed twice", n.Key)
		}
		keys[n.Key] = true
		if i > 0 && n.Depth < nodes[i-1].Depth {
			t.Errorf("node %s at depth %d after depth %d: nearest first broken", n.Key, n.Depth, nodes[i-1].Depth)
		}
	}
	if diff := slices.Compare([]int{first.ByDepth[0].Count, first.ByDepth[1].Count, first.ByDepth[2].Count}, []int{1, 600, 600}); diff != 0 || len(first.ByDepth) != 3 {
		t.Errorf("byDepth %v, want 1, 600, 600 at depths 0..2", first.ByDepth)
	}

	// Hostile callers: a cursor of another query, a forged one, a budget
	// outside the bounds, and a cursor after the snapshot changed.
	_, err := s.Graph(fleetgraph.GraphQuery{Service: "pay", Cursor: first.NextCursor})
	wantCode(t, "cursor with another query", err, fleetgraph.CodeCursorInvalid)
	_, err = s.Graph(fleetgraph.GraphQuery{Service: "pay", Cursor: "eyJzIjoieCIsIm8iOi0xfQ"})
	wantCode(t, "forged cursor", err, fleetgraph.CodeCursorInvalid)
	for _, n := range []int{-1, 1, fleetgraph.MinMaxBytes - 1, fleetgraph.MaxMaxBytes + 1} {
		_, err = s.Graph(fleetgraph.GraphQuery{Service: "pay", MaxBytes: n})
		wantCode(t, fmt.Sprintf("max_bytes %d", n), err, fleetgraph.CodeInvalidQuery)
	}
	if err := b.UpsertRevision(&fleetgraph.Revision{Domain: "registry.example.com/shop", Name: "newcomer", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", 1<<40), Source: "test"}); err != nil {
		t.Fatal(err)
	}
	s2 := b.Flush()
	q.Cursor = first.NextCursor
	_, err = s2.Graph(q)
	wantCode(t, "cursor on a newer snapshot", err, fleetgraph.CodeSnapshotMismatch)

	// A larger budget takes more per page, and the cursor does not
	// depend on it.
	q.Cursor, q.MaxBytes = "", fleetgraph.MaxMaxBytes
	big, err := s.Graph(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(big.Nodes) <= len(first.Nodes) || encodedSize(t, big) > fleetgraph.MaxMaxBytes {
		t.Errorf("max_bytes %d: %d nodes (default page: %d), %d bytes", q.MaxBytes, len(big.Nodes), len(first.Nodes), encodedSize(t, big))
	}
	q.Cursor, q.MaxBytes = first.NextCursor, fleetgraph.MinMaxBytes
	small, err := s.Graph(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Nodes) == 0 || small.Nodes[0].Key != nodes[len(first.Nodes)].Key && len(first.Edges) == 0 {
		t.Errorf("the default page's cursor at max_bytes %d starts at %v", q.MaxBytes, small.Nodes)
	}
	if n := encodedSize(t, small); n > fleetgraph.MinMaxBytes {
		t.Errorf("max_bytes %d: the page is %d bytes", fleetgraph.MinMaxBytes, n)
	}
}

// With include_observed, a hub's observed callers are paged with the
// nodes they touch: every page stays within the budget, the pages list
// every observed edge once, each after the node it leads into, and the
// totals and what remains count them.
func TestGraphObservedPagesWithinBudget(t *testing.T) {
	b, _ := hubFleet(t, 600)
	var seenEdges []fleetgraph.ObservedEdge
	for i := range 600 {
		c, d := fmt.Sprintf("consumer-%04d", i), fmt.Sprintf("downstream-%04d", i)
		seenEdges = append(seenEdges,
			fleetgraph.ObservedEdge{From: c, To: "pay", Calls: 3},   // declared too
			fleetgraph.ObservedEdge{From: d, To: c, Calls: 2},       // declared too
			fleetgraph.ObservedEdge{From: d, To: "pay", Calls: 1},   // a shadow dependency
			fleetgraph.ObservedEdge{From: "ghost", To: c, Calls: 1}, // a caller the fleet does not know
		)
	}
	b.SetObserved(fleetgraph.NewObserved(seenEdges, ""))
	s := b.Flush()
	q := fleetgraph.GraphQuery{Service: "pay", Direction: fleetgraph.DirectionDependents, Transitive: true, MaxNodes: fleetgraph.MaxMaxNodes, IncludeObserved: true}
	seen := map[string]bool{}
	listed := map[[2]string]string{}
	var first *fleetgraph.GraphResult
	pages, observed := 0, 0
	for cur := ""; ; {
		q.Cursor = cur
		res, err := s.Graph(q)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		pages++
		if n := encodedSize(t, res); n > fleetgraph.DefaultMaxBytes {
			t.Errorf("page %d is %d bytes, above the budget %d", pages, n, fleetgraph.DefaultMaxBytes)
		}
		if res.Total != first.Total {
			t.Errorf("page %d totals %v, page 1 said %v", pages, res.Total, first.Total)
		}
		if !strings.Contains(limitationCodes(res.Meta), fleetgraph.LimitObservedIdentityUnresolved) {
			t.Errorf("page %d limitations %s: want %s for ghost", pages, limitationCodes(res.Meta), fleetgraph.LimitObservedIdentityUnresolved)
		}
		for _, n := range res.Nodes {
			seen[n.Key] = true
		}
		if res.Observed == nil {
			t.Fatalf("page %d has no observed list although include_observed is set", pages)
		}
		for _, o := range res.Observed {
			k := [2]string{o.FromService, o.ToService}
			if _, dup := listed[k]; dup {
				t.Errorf("observed %s → %s listed twice", o.FromService, o.ToService)
			}
			listed[k] = o.Provenance
			if !seen[o.ToService] {
				t.Errorf("page %d lists observed %s → %s before its node", pages, o.FromService, o.ToService)
			}
		}
		observed += len(res.Observed)
		if res.NextCursor == "" {
			if res.Remaining != nil {
				t.Errorf("last page: remaining %v", res.Remaining)
			}
			break
		}
		if res.Remaining == nil || res.Remaining.Observed != first.Total.Observed-observed {
			t.Errorf("page %d: remaining %v, want %d observed left", pages, res.Remaining, first.Total.Observed-observed)
		}
		cur = res.NextCursor
	}
	if first.Total.Observed != 1800 || observed != 1800 || len(listed) != 1800 {
		t.Fatalf("total %d observed, %d listed over %d pages (%d distinct); want 1800", first.Total.Observed, observed, pages, len(listed))
	}
	if pages < 5 {
		t.Errorf("%d pages: the observed edges should not fit in fewer than 5", pages)
	}
	if listed[[2]string{"registry.example.com%2Fshop/downstream-0007", "registry.example.com%2Fshop/pay"}] != fleetgraph.ProvenanceObserved ||
		listed[[2]string{"registry.example.com%2Fshop/consumer-0007", "registry.example.com%2Fshop/pay"}] != fleetgraph.ProvenanceDeclaredObserved {
		t.Errorf("provenances: a shadow caller must read observed, a declared one declared+observed")
	}
	// A small budget still makes progress and stays within it.
	q.Cursor, q.MaxBytes = first.NextCursor, fleetgraph.MinMaxBytes
	small, err := s.Graph(q)
	if err != nil {
		t.Fatal(err)
	}
	if n := encodedSize(t, small); n > fleetgraph.MinMaxBytes || len(small.Nodes)+len(small.Edges)+len(small.Observed) == 0 {
		t.Errorf("max_bytes %d: %d bytes, %d nodes, %d observed", fleetgraph.MinMaxBytes, n, len(small.Nodes), len(small.Observed))
	}
}

// Impact on a hub lists the most affected consumers first, within the
// budget; the counts are the whole answer's.
func TestImpactPagesWithinBudget(t *testing.T) {
	_, s := hubFleet(t, 600)
	older, newer := payBundle(t, "1.0.0", true), payBundle(t, "1.1.0", false)
	var all []fleetgraph.Consumer
	var first *fleetgraph.ImpactResult
	for cur := ""; ; {
		res, err := s.Impact(t.Context(), older, newer, &fleetgraph.ImpactOptions{Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		if n := encodedSize(t, res); n > fleetgraph.DefaultMaxBytes {
			t.Errorf("page is %d bytes, above the budget %d", n, fleetgraph.DefaultMaxBytes)
		}
		all = append(all, res.Consumers...)
		if res.RemainingConsumers != res.TotalConsumers-len(all) {
			t.Errorf("remaining %d, want %d", res.RemainingConsumers, res.TotalConsumers-len(all))
		}
		if res.NextCursor == "" {
			break
		}
		cur = res.NextCursor
	}
	if first.NextCursor == "" || first.TotalConsumers != 1200 || len(all) != 1200 {
		t.Fatalf("total %d, listed %d over pages, first cursor %q", first.TotalConsumers, len(all), first.NextCursor)
	}
	wantRisk := map[string]int{fleetgraph.RiskAtRisk: 200, fleetgraph.RiskUnknown: 400, fleetgraph.RiskIndirect: 200, fleetgraph.RiskExcluded: 200, fleetgraph.RiskUnaffected: 200}
	if fmt.Sprint(first.ConsumersByRisk) != fmt.Sprint(wantRisk) || first.AtRiskConsumers != 200 || first.IncompatibleConsumers != 200 {
		t.Errorf("by risk %v (at risk %d, excluded %d), want %v", first.ConsumersByRisk, first.AtRiskConsumers, first.IncompatibleConsumers, wantRisk)
	}
	rank := []string{fleetgraph.RiskAtRisk, fleetgraph.RiskReview, fleetgraph.RiskUnknown, fleetgraph.RiskIndirect, fleetgraph.RiskExcluded, fleetgraph.RiskUnaffected}
	for i := 1; i < len(all); i++ {
		if slices.Index(rank, all[i].Risk) < slices.Index(rank, all[i-1].Risk) {
			t.Fatalf("consumer %d (%s) after one %s: most affected first broken", i, all[i].Risk, all[i-1].Risk)
		}
	}
	if first.Consumers[0].Risk != fleetgraph.RiskAtRisk || len(first.AtRisk) == 0 || len(first.AtRisk) > len(first.Consumers) {
		t.Errorf("page 1 starts with %s and names %d at risk of %d listed", first.Consumers[0].Risk, len(first.AtRisk), len(first.Consumers))
	}
	if h := first.Headline(); !containsAll(h, "200 of 1200 consumer(s) AT RISK", "and 190 more", "repeat the call with cursor") {
		t.Errorf("headline %q does not give the totals and the way to the rest", h)
	}
	// The cursor is bound to the two revisions compared.
	_, err := s.Impact(t.Context(), older, payBundle(t, "2.0.0", false), &fleetgraph.ImpactOptions{Cursor: first.NextCursor})
	wantCode(t, "cursor with other revisions", err, fleetgraph.CodeCursorInvalid)
}

// Status pages end at the byte budget as well as at the limit, and count
// every item by code.
func TestStatusPagesWithinBudget(t *testing.T) {
	_, s := hubFleet(t, 3000)
	res, err := s.Status(fleetgraph.StatusQuery{UnresolvedDeps: true, Limit: fleetgraph.MaxStatusLimit, MaxBytes: fleetgraph.MinMaxBytes})
	if err != nil {
		t.Fatal(err)
	}
	if n := encodedSize(t, res); n > fleetgraph.MinMaxBytes || res.NextCursor == "" || res.Count == fleetgraph.MaxStatusLimit {
		t.Errorf("status at max_bytes %d: %d bytes, %d items, cursor %q", fleetgraph.MinMaxBytes, n, res.Count, res.NextCursor)
	}
	if res.ByCode[fleetgraph.CodeUnresolvedDep] != 300 || res.Total != 300 {
		t.Errorf("byCode %v, total %d; want 300 unresolved", res.ByCode, res.Total)
	}
	next, err := s.Status(fleetgraph.StatusQuery{UnresolvedDeps: true, Limit: fleetgraph.MaxStatusLimit, Cursor: res.NextCursor, MaxBytes: fleetgraph.MaxMaxBytes})
	if err != nil {
		t.Fatal(err)
	}
	if next.Count != res.Total-res.Count {
		t.Errorf("page 2 lists %d, want the other %d", next.Count, res.Total-res.Count)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
