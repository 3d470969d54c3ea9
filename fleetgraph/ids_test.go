package fleetgraph_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
)

// TestImpactAfterNumbersAreReused: whole services go (their revision and
// every target) and new ones come, which take the freed numbers; impact
// answers, page by page, exactly as a Builder that only ever saw the last
// records (and numbered its services afresh), and the snapshot's numbers
// agree with its records after each batch.
func TestImpactAfterNumbersAreReused(t *testing.T) {
	const n, domain = 300, "registry.example.com/shop"
	revs, tgts := syntheticN(n, 3*n)
	revs = append(revs, &fleetgraph.Revision{Domain: domain, Name: "pay", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", n+1), Source: "synthetic"})
	for i := 0; i < n; i += 10 {
		r := *revs[i]
		r.Edges = append(slices.Clone(r.Edges), fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: "pay", Ref: "oci://" + domain + "/pay", Required: true, Compatibility: []string{"^1.0.0", "~1.0.0", ""}[i%3]})
		revs[i] = &r
	}
	curRevs, curTgts := map[string]*fleetgraph.Revision{}, map[string]*fleetgraph.Target{}
	for _, r := range revs {
		curRevs[r.Key()] = r
	}
	for _, tg := range tgts {
		curTgts[tg.Key()] = tg
	}
	b := buildSynthetic(t, revs, tgts)
	older, newer := payBundle(t, "1.0.0", true), payBundle(t, "1.1.0", false)
	answers := func(s *fleetgraph.Snapshot) []string {
		var out []string
		for _, bound := range []int{0, 40} {
			cursor := ""
			for page := 0; ; page++ {
				res, err := s.Impact(t.Context(), older, newer, &fleetgraph.ImpactOptions{MaxConsumers: bound, MaxBytes: 6 << 10, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				// The envelope and the cursor name the snapshot, which
				// differs between the two Builders.
				cursor = res.NextCursor
				res.Meta, res.NextCursor = fleetgraph.Meta{}, ""
				raw, err := json.MarshalIndent(res, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(raw))
				if cursor == "" {
					break
				}
				if page > 1000 {
					t.Fatal("the pages do not end")
				}
			}
		}
		return out
	}
	// Three direct consumers of the hub (every tenth service depends on
	// it) and one that is not go whole.
	gone := []string{"svc-00010", "svc-00020", "svc-00030", "svc-00031"}
	freed := map[int]bool{}
	s := b.Current()
	for _, r := range revs {
		if slices.Contains(gone, r.Name) {
			freed[s.ServiceNumber(r.ServiceKey())] = true
			b.DeleteRevision(r.Key())
			delete(curRevs, r.Key())
		}
	}
	for k, tg := range curTgts {
		if slices.Contains(gone, tg.Service) {
			b.DeleteTarget(k)
			delete(curTgts, k)
		}
	}
	var fresh []*fleetgraph.Revision
	for i := range 6 {
		r := &fleetgraph.Revision{Domain: domain, Name: fmt.Sprintf("new-%d", i), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", 10*n+i), Source: "synthetic", Owner: "team-new",
			Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: "pay", Ref: "oci://" + domain + "/pay", Required: i%2 == 0, Compatibility: []string{"^1.0.0", "^2.0.0", ""}[i%3]}}}
		if i > 0 {
			// a chain among the new services: new-1 depends on new-0 ...
			r.Edges = append(r.Edges, fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: fmt.Sprintf("new-%d", i-1), Ref: fmt.Sprintf("oci://%s/new-%d", domain, i-1), Required: true})
		}
		fresh = append(fresh, r)
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"services go", func() {}},
		{"a direct consumer's targets change status (its record is copied, its number kept)", func() {
			for _, k := range slices.Sorted(maps.Keys(curTgts)) {
				if tg := *curTgts[k]; tg.Service == "svc-00040" {
					tg.Compliance = fleetgraph.Statuses()[(slices.Index(fleetgraph.Statuses(), tg.Compliance)+1)%5]
					if err := b.UpsertTarget(&tg); err != nil {
						t.Fatal(err)
					}
					curTgts[k] = &tg
				}
			}
		}},
		{"new services take their numbers", func() {
			for _, r := range fresh {
				if err := b.UpsertRevision(r); err != nil {
					t.Fatal(err)
				}
				curRevs[r.Key()] = r
			}
		}},
	}
	// The first step's deletions are queued already.
	for _, st := range steps {
		st.do()
		s := b.Flush()
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		want := answers(buildSynthetic(t, slices.Collect(maps.Values(curRevs)), slices.Collect(maps.Values(curTgts))).Current())
		if d := cmp.Diff(want, answers(s)); d != "" {
			t.Fatalf("%s: the answer differs from a fresh Builder's (-fresh +churned):\n%s", st.name, d)
		}
	}
	reused := 0
	for _, r := range fresh {
		if freed[b.Current().ServiceNumber(r.ServiceKey())] {
			reused++
		}
	}
	if reused != len(freed) {
		t.Errorf("%d of the %d freed numbers were reused by the %d new services", reused, len(freed), len(fresh))
	}
}
