package fleetgraph_test

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
)

// Synthetic fleet shape (the benchmark fleet).
const (
	benchServices = 10_000
	benchTargets  = 30_000
	benchDeps     = 5
)

// synthetic returns a reproducible fleet: services with one revision each
// and benchDeps dependencies on random other services, and targets spread
// over them with labels, compliance and evidence.
func synthetic() ([]*fleetgraph.Revision, []*fleetgraph.Target) {
	return syntheticN(benchServices, benchTargets)
}

// syntheticN is synthetic with services services and targets targets.
func syntheticN(benchServices, benchTargets int) ([]*fleetgraph.Revision, []*fleetgraph.Target) {
	rng := rand.New(rand.NewPCG(1, 2))
	revs := make([]*fleetgraph.Revision, benchServices)
	for i := range revs {
		r := &fleetgraph.Revision{
			Domain: "registry.example.com/team" + fmt.Sprint(i%40), Name: fmt.Sprintf("svc-%05d", i), Version: fmt.Sprintf("1.%d.0", i%7),
			Digest: fmt.Sprintf("sha256:%064x", i), Owner: fmt.Sprintf("team-%d", i%40), Workload: "service", Source: "synthetic",
			Capabilities: []string{"health"},
		}
		if i%3 == 0 {
			r.Readiness = &fleetgraph.Readiness{Score: 80, MinScore: 70, Expires: "2099-01-01"}
		}
		for range benchDeps {
			j := rng.IntN(benchServices)
			r.Edges = append(r.Edges, fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: fmt.Sprintf("svc-%05d", j),
				Ref: fmt.Sprintf("oci://registry.example.com/team%d/svc-%05d", j%40, j), Required: true, Compatibility: "^1.0.0"})
		}
		revs[i] = r
	}
	statuses := fleetgraph.Statuses()
	tgts := make([]*fleetgraph.Target, benchTargets)
	for i := range tgts {
		s := i % benchServices
		tgts[i] = &fleetgraph.Target{
			Scope: fmt.Sprintf("cluster-%d", i%12), Kind: "kubernetes-workload", Name: fmt.Sprintf("ns-%d/svc-%05d-%d", s%50, s, i),
			Service: fmt.Sprintf("svc-%05d", s), Domain: "registry.example.com/team" + fmt.Sprint(s%40),
			ResolvedRef: fmt.Sprintf("oci://registry.example.com/team%d/svc-%05d:1.%d.0", s%40, s, s%7),
			Compliance:  statuses[rng.IntN(5)], EvidenceAt: time.Date(2026, 7, 1+i%30, 0, 0, 0, 0, time.UTC),
			Labels: map[string]string{"env": []string{"prod", "staging", "dev"}[i%3]}, Source: "synthetic",
		}
	}
	return revs, tgts
}

func buildSynthetic(tb testing.TB, revs []*fleetgraph.Revision, tgts []*fleetgraph.Target) *fleetgraph.Builder {
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Freshness: 14 * 24 * time.Hour, Clock: func() time.Time { return testAsOf }})
	for _, r := range revs {
		if err := b.UpsertRevision(r); err != nil {
			tb.Fatal(err)
		}
	}
	for _, t := range tgts {
		if err := b.UpsertTarget(t); err != nil {
			tb.Fatal(err)
		}
	}
	b.SetSource(fleetgraph.SourceState{ID: "synthetic", Kind: "test", Status: fleetgraph.SourceAvailable})
	b.Flush()
	return b
}

func BenchmarkFullBuild(b *testing.B) {
	revs, tgts := synthetic()
	b.ReportAllocs()
	for b.Loop() {
		buildSynthetic(b, revs, tgts)
	}
}

// BenchmarkRetainedHeap reports the live heap the synthetic fleet's
// snapshot holds, per target (revisions and services included).
func BenchmarkRetainedHeap(b *testing.B) {
	revs, tgts := synthetic()
	var bld *fleetgraph.Builder
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		bld = buildSynthetic(b, revs, tgts)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchTargets, "retainedB/target")
	}
	runtime.KeepAlive(bld)
}

func BenchmarkIncrementalPublish(b *testing.B) {
	revs, tgts := synthetic()
	bld := buildSynthetic(b, revs, tgts)
	t := *tgts[0]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		t.Compliance = fleetgraph.Statuses()[i%5]
		t.Name = fmt.Sprintf("moving-%d", i%1000)
		if err := bld.UpsertTarget(&t); err != nil {
			b.Fatal(err)
		}
		bld.Flush()
	}
}

func BenchmarkSearch(b *testing.B) {
	revs, tgts := synthetic()
	s := buildSynthetic(b, revs, tgts).Current()
	for _, q := range []struct {
		name string
		q    fleetgraph.SearchQuery
	}{
		{"unfiltered", fleetgraph.SearchQuery{Limit: 50}},
		{"text", fleetgraph.SearchQuery{Limit: 50, Text: "svc-01"}},
		{"compliance+label", fleetgraph.SearchQuery{Limit: 50, Compliance: fleetgraph.StatusNonCompliant, Labels: "env=prod"}},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Search(q.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTransitiveGraph(b *testing.B) {
	revs, tgts := synthetic()
	s := buildSynthetic(b, revs, tgts).Current()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Graph(fleetgraph.GraphQuery{Service: "registry.example.com%2Fteam0/svc-00000", Transitive: true, MaxDepth: 3}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatus(b *testing.B) {
	revs, tgts := synthetic()
	s := buildSynthetic(b, revs, tgts).Current()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Status(fleetgraph.StatusQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkImpact(b *testing.B) {
	revs, tgts := synthetic()
	s := buildSynthetic(b, revs, tgts).Current()
	older, err := bundle.LoadDir("../examples/bundles/payments", nil)
	if err != nil {
		b.Fatal(err)
	}
	newer, err := bundle.LoadDir("testdata/impact/payments-v4", nil)
	if err != nil {
		b.Fatal(err)
	}
	// Point the diff at a synthetic service with many dependents.
	opts := &fleetgraph.ImpactOptions{Domain: "registry.example.com/team0"}
	older.Contract.Service.Name, newer.Contract.Service.Name = "svc-00000", "svc-00000"
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.Impact(older, newer, opts)
		if err != nil || !res.InFleet {
			b.Fatal(err, res.InFleet)
		}
	}
}

// BenchmarkScopedQueries compares each query on the whole snapshot
// (unfiltered) with the same query on a restricted view, looked up per
// query as a server does (Restrict, warm: the view is built on first use
// per snapshot and visibility), on the synthetic fleet with revisions and
// targets spread over 12 scopes. restrict-cold is the one-off cost of
// building a view.
func BenchmarkScopedQueries(b *testing.B) {
	revs, tgts := synthetic()
	for i, r := range revs {
		c := *r
		c.Scopes = []string{fmt.Sprintf("cluster-%d", i%12)}
		revs[i] = &c
	}
	s := buildSynthetic(b, revs, tgts).Current()
	half := fleetgraph.OnlyScopes("cluster-0", "cluster-1", "cluster-2", "cluster-3", "cluster-4", "cluster-5")
	one := fleetgraph.OnlyScopes("cluster-0")
	queries := []struct {
		name string
		run  func(*fleetgraph.Snapshot) error
	}{
		{"search", func(s *fleetgraph.Snapshot) error { _, err := s.Search(fleetgraph.SearchQuery{Limit: 50}); return err }},
		{"search-filters", func(s *fleetgraph.Snapshot) error {
			_, err := s.Search(fleetgraph.SearchQuery{Limit: 50, Compliance: fleetgraph.StatusNonCompliant, Labels: "env=prod"})
			return err
		}},
		{"get", func(s *fleetgraph.Snapshot) error {
			_, err := s.Get(fleetgraph.GetQuery{Service: "registry.example.com%2Fteam0/svc-00000"})
			return err
		}},
		{"status", func(s *fleetgraph.Snapshot) error { _, err := s.Status(fleetgraph.StatusQuery{}); return err }},
		{"graph", func(s *fleetgraph.Snapshot) error {
			_, err := s.Graph(fleetgraph.GraphQuery{Service: "registry.example.com%2Fteam0/svc-00000", Transitive: true, MaxDepth: 3})
			return err
		}},
	}
	for _, q := range queries {
		for _, mode := range []struct {
			name string
			snap func() *fleetgraph.Snapshot
		}{
			{"unfiltered", func() *fleetgraph.Snapshot { return s }},
			{"filtered-6of12", func() *fleetgraph.Snapshot { return s.Restrict(half) }},
			{"filtered-1of12", func() *fleetgraph.Snapshot { return s.Restrict(one) }},
		} {
			b.Run(q.name+"/"+mode.name, func(b *testing.B) {
				_ = q.run(mode.snap()) // build the view outside the loop
				b.ReportAllocs()
				for b.Loop() {
					if err := q.run(mode.snap()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	for _, v := range []struct {
		name   string
		scopes []string
	}{{"6of12", half.Scopes()}, {"1of12", one.Scopes()}} {
		b.Run("restrict-cold/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++ // a scope no record has makes each visibility new
				s.Restrict(fleetgraph.OnlyScopes(append(v.scopes, fmt.Sprint("none-", i))...))
			}
		})
	}
	// A reader who may see no scope (a token with no RBAC): its view is
	// built without a walk over the fleet, each one new here.
	b.Run("restrict-cold/0of12", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			s.Restrict(fleetgraph.NoScopes(fmt.Sprint("nothing visible ", i)))
		}
	})
}

// BenchmarkChangeThenQuery is the live case: one target changes, the
// snapshot is published, and a reader queries it, unfiltered or through
// a view of half the scopes (carried from the previous snapshot, so the
// change is applied to it rather than the view rebuilt).
func BenchmarkChangeThenQuery(b *testing.B) {
	revs, tgts := synthetic()
	for i, r := range revs {
		c := *r
		c.Scopes = []string{fmt.Sprintf("cluster-%d", i%12)}
		revs[i] = &c
	}
	half := fleetgraph.OnlyScopes("cluster-0", "cluster-1", "cluster-2", "cluster-3", "cluster-4", "cluster-5")
	for _, mode := range []struct {
		name string
		vis  *fleetgraph.Visibility
	}{{"unfiltered", nil}, {"filtered-6of12", &half}} {
		b.Run(mode.name, func(b *testing.B) {
			bld := buildSynthetic(b, revs, tgts)
			if mode.vis != nil {
				bld.Current().Restrict(*mode.vis) // the reader's first query built its view
			}
			t := *tgts[0]
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				t.Compliance = fleetgraph.Statuses()[i%5]
				if err := bld.UpsertTarget(&t); err != nil {
					b.Fatal(err)
				}
				s := bld.Flush()
				if mode.vis != nil {
					s = s.Restrict(*mode.vis)
				}
				if _, err := s.Search(fleetgraph.SearchQuery{Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFirstQueryOfIdentity is what a reader pays on its first query
// of a snapshot when no reader with its namespaces asked before: the view
// is built (Restrict) and then queried. Beside it, in one run, the same
// query unfiltered and on the view once built, on a fleet of 2,000
// services (one revision each) and 6,000 targets over 12 namespaces.
//
//	go test ./fleetgraph -run '^$' -bench FirstQueryOfIdentity -benchmem
func BenchmarkFirstQueryOfIdentity(b *testing.B) {
	revs, tgts := syntheticN(2000, 6000)
	for i, r := range revs {
		c := *r
		c.Scopes = []string{fmt.Sprintf("cluster-%d", i%12)}
		revs[i] = &c
	}
	s := buildSynthetic(b, revs, tgts).Current()
	half := fleetgraph.OnlyScopes("cluster-0", "cluster-1", "cluster-2", "cluster-3", "cluster-4", "cluster-5").Scopes()
	search := func(s *fleetgraph.Snapshot) {
		if _, err := s.Search(fleetgraph.SearchQuery{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("unfiltered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			search(s)
		}
	})
	// Each of the 924 ways to see 6 of the 12 namespaces is a view of its
	// own: every iteration builds one.
	var combos [][]string
	for m := range 1 << 12 {
		if bits.OnesCount(uint(m)) == 6 {
			var c []string
			for i := range 12 {
				if m&(1<<i) != 0 {
					c = append(c, fmt.Sprintf("cluster-%d", i))
				}
			}
			combos = append(combos, c)
		}
	}
	b.Run("first-query-6of12", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			search(s.Restrict(fleetgraph.OnlyScopes(combos[i%len(combos)]...)))
			i++
		}
	})
	// A new reader whose namespaces differ from a known reader's only in
	// namespaces that hold nothing shares that reader's view.
	b.Run("new-reader-same-populated-6of12", func(b *testing.B) {
		search(s.Restrict(fleetgraph.OnlyScopes(half...)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			search(s.Restrict(fleetgraph.OnlyScopes(append(half, fmt.Sprint("empty-", i))...)))
		}
	})
	b.Run("warm-6of12", func(b *testing.B) {
		v := fleetgraph.OnlyScopes(half...)
		search(s.Restrict(v))
		b.ReportAllocs()
		for b.Loop() {
			search(s.Restrict(v))
		}
	})
}
