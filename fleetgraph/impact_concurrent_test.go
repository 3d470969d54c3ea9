package fleetgraph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
)

// TestImpactColdWalksInParallel: cold impact walks (each the first of its
// question, so none is read from a snapshot's memo) answer the same when
// many run at once on one snapshot, and on two snapshots of different
// sizes, as when they run one after another. The walks share their
// scratch through a pool, so a scratch given back with a mark or a list
// left in it, or handed to two walks at once, shows here: as a second
// serial walk that differs from the first, or a parallel one that differs
// from both (run it with -race).
func TestImpactColdWalksInParallel(t *testing.T) {
	const n, domain = 600, "registry.example.com/shop"
	revs, tgts := syntheticN(n, 3*n)
	revs = append(revs, &fleetgraph.Revision{Domain: domain, Name: "pay", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", n+1), Source: "synthetic"})
	for i := 0; i < n; i += 10 {
		r := *revs[i]
		r.Edges = append(slices.Clone(r.Edges), fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: "pay", Ref: "oci://" + domain + "/pay", Required: true, Compatibility: []string{"^1.0.0", "~1.0.0", ""}[i%3]})
		revs[i] = &r
	}
	big := buildSynthetic(t, revs, tgts).Current()
	small := riskFleet(t)
	older, newer := payBundle(t, "1.0.0", true), payBundle(t, "1.1.0", false)

	// k makes every question new to the snapshot's memo: a bound above
	// any fleet here changes nothing in the answer but its cursor, and a
	// call's own observed edges are never kept.
	var k atomic.Int64
	type question struct {
		name string
		s    *fleetgraph.Snapshot
		opts func() *fleetgraph.ImpactOptions
	}
	shadow := func() *fleetgraph.Observed {
		return fleetgraph.NewObserved([]fleetgraph.ObservedEdge{{From: "svc-00003", To: "pay", Calls: 2}, {From: "svc-00010", To: "pay", Calls: 1}}, "")
	}
	var questions []question
	for _, s := range []struct {
		name string
		s    *fleetgraph.Snapshot
	}{{"big", big}, {"small", small}} {
		questions = append(questions,
			question{s.name + "/all", s.s, func() *fleetgraph.ImpactOptions {
				return &fleetgraph.ImpactOptions{MaxConsumers: 1000 + int(k.Add(1))}
			}},
			question{s.name + "/all-small-pages", s.s, func() *fleetgraph.ImpactOptions {
				return &fleetgraph.ImpactOptions{MaxConsumers: 1000 + int(k.Add(1)), MaxBytes: 4 << 10}
			}},
			question{s.name + "/bounded-observed", s.s, func() *fleetgraph.ImpactOptions {
				return &fleetgraph.ImpactOptions{MaxConsumers: 40, Observed: shadow()}
			}},
			question{s.name + "/bounded-3-observed-none", s.s, func() *fleetgraph.ImpactOptions {
				return &fleetgraph.ImpactOptions{MaxConsumers: 3, Observed: fleetgraph.NewObserved(nil, "")}
			}},
		)
	}
	answer := func(q question) (string, error) {
		res, err := q.s.Impact(t.Context(), older, newer, q.opts())
		if err != nil {
			return "", err
		}
		res.NextCursor = "" // names the question's bound
		raw, err := json.MarshalIndent(res, "", " ")
		return string(raw), err
	}
	want := make([]string, len(questions))
	for i, q := range questions {
		a, err := answer(q)
		if err != nil {
			t.Fatal(err)
		}
		var res fleetgraph.ImpactResult
		if err := json.Unmarshal([]byte(a), &res); err != nil {
			t.Fatal(err)
		}
		if res.TotalConsumers == 0 {
			t.Fatalf("%s: no consumers, so the test proves nothing", q.name)
		}
		want[i] = a
	}
	// Serial again, in another order: each walk starts from a scratch
	// another question's walk gave back.
	for i := len(questions) - 1; i >= 0; i-- {
		got, err := answer(questions[i])
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[i], got); d != "" {
			t.Fatalf("%s, second serial walk (-first +second):\n%s", questions[i].name, d)
		}
	}
	const workers, rounds = 8, 6
	var wg sync.WaitGroup
	errs := make(chan string, workers*rounds*len(questions))
	for g := range workers {
		wg.Go(func() {
			for r := range rounds * len(questions) {
				i := (g + r) % len(questions)
				got, err := answer(questions[i])
				if err != nil {
					errs <- err.Error()
					return
				}
				if d := cmp.Diff(want[i], got); d != "" {
					errs <- fmt.Sprintf("%s, parallel walk (-serial +parallel):\n%s", questions[i].name, d)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
