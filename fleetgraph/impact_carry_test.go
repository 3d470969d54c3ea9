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

// TestImpactCarriedWalk: an impact walk a snapshot takes over from the
// one before it (carryImpact) answers, page by page, exactly as a walk of
// a Builder that never saw the earlier snapshots: after a target change
// that moves a consumer's status, an unrelated target change, a
// consumer's new revision with another dependency (its lists change, so
// the walk is made again), a consumer removed, and the hub's own target
// moved.
func TestImpactCarriedWalk(t *testing.T) {
	const n, domain = 400, "registry.example.com/shop"
	revs, tgts := syntheticN(n, 3*n)
	revs = append(revs, &fleetgraph.Revision{Domain: domain, Name: "pay", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", n+1), Source: "synthetic"})
	for i := 0; i < n; i += 10 {
		r := *revs[i]
		r.Edges = append(slices.Clone(r.Edges), fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: "pay", Ref: "oci://" + domain + "/pay", Required: true, Compatibility: []string{"^1.0.0", "~1.0.0", ""}[i%3]})
		revs[i] = &r
	}
	curRevs := map[string]*fleetgraph.Revision{}
	for _, r := range revs {
		curRevs[r.Key()] = r
	}
	curTgts := map[string]*fleetgraph.Target{}
	for _, tg := range tgts {
		curTgts[tg.Key()] = tg
	}
	b := buildSynthetic(t, revs, tgts)
	older, newer := payBundle(t, "1.0.0", true), payBundle(t, "1.1.0", false)
	answers := func(s *fleetgraph.Snapshot) []string {
		var out []string
		for _, budget := range []int{0, 6 << 10} {
			cursor := ""
			for page := 0; ; page++ {
				res, err := s.Impact(t.Context(), older, newer, &fleetgraph.ImpactOptions{MaxBytes: budget, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				raw, err := json.MarshalIndent(res, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(raw))
				if cursor = res.NextCursor; cursor == "" {
					break
				}
				if page > 1000 {
					t.Fatal("the pages do not end")
				}
			}
		}
		return out
	}
	prev := answers(b.Flush()) // the walks the next snapshots take over
	target := func(service string) *fleetgraph.Target {
		for _, k := range slices.Sorted(maps.Keys(curTgts)) {
			if tg := curTgts[k]; tg.Service == service {
				return tg
			}
		}
		t.Fatalf("no target of %s", service)
		return nil
	}
	// moveTarget sets the compliance of every target of service to the
	// next status after the first one's.
	moveTarget := func(service string) {
		next := fleetgraph.Statuses()[(slices.Index(fleetgraph.Statuses(), target(service).Compliance)+1)%5]
		for _, k := range slices.Sorted(maps.Keys(curTgts)) {
			if curTgts[k].Service != service {
				continue
			}
			tg := *curTgts[k]
			tg.Compliance = next
			if err := b.UpsertTarget(&tg); err != nil {
				t.Fatal(err)
			}
			curTgts[tg.Key()] = &tg
		}
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"a direct consumer's target changes status", func() { moveTarget("svc-00010") }},
		{"another consumer's targets change", func() { moveTarget("svc-00007") }},
		{"a direct consumer's new revision no longer depends on the hub", func() {
			r := *curRevs[revs[20].Key()]
			r.Edges = slices.DeleteFunc(slices.Clone(r.Edges), func(e fleetgraph.Edge) bool { return e.Name == "pay" })
			if err := b.UpsertRevision(&r); err != nil {
				t.Fatal(err)
			}
			curRevs[r.Key()] = &r
		}},
		{"a consumer goes", func() {
			b.DeleteRevision(revs[40].Key())
			delete(curRevs, revs[40].Key())
		}},
		{"a target of a consumer that depends on a removed one changes", func() { moveTarget("svc-00050") }},
	}
	for _, st := range steps {
		st.do()
		got := answers(b.Flush())
		want := answers(buildSynthetic(t, slices.Collect(maps.Values(curRevs)), slices.Collect(maps.Values(curTgts))).Flush())
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s: the carried answer differs from a fresh walk's (-fresh +carried):\n%s", st.name, d)
		}
		// Every step changes the answer (a consumer's status, path or
		// place), so a walk carried unchanged would be caught.
		if cmp.Equal(stripMeta(t, prev), stripMeta(t, got)) {
			t.Fatalf("%s: the answers did not change, so the step tests nothing", st.name)
		}
		prev = got
	}
}

// stripMeta drops the envelope and cursor of each answer: what is left
// is the consumers and counts.
func stripMeta(t *testing.T, answers []string) []string {
	t.Helper()
	out := make([]string, len(answers))
	for i, a := range answers {
		var m map[string]any
		if err := json.Unmarshal([]byte(a), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "meta")
		delete(m, "nextCursor")
		raw, _ := json.Marshal(m)
		out[i] = string(raw)
	}
	return out
}
