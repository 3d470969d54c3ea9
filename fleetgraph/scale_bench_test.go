package fleetgraph_test

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
)

// BenchmarkFleetScale measures the fleet's agent-facing answers at 10,000
// and 50,000 services (set KUBEPACT_BENCH_SCALE=10000 to run one size):
// the synthetic fleet (benchDeps random dependencies each, three targets
// a service) plus a hub, pay, that every tenth service depends on. Each
// query reports its p50 and p99 latency, its CPU time per call (user +
// system, from getrusage) and the bytes of its answer's JSON; "start"
// reports building the fleet's first snapshot from its records (its CPU
// time and the heap it keeps), and first-µs and first-cpu-µs each
// query's first call on a snapshot published just before it (one target
// changed), the repeats' figures are on that snapshot; impact-hub-first
// publishes a snapshot before every call, so all its calls are first
// calls, and impact-hub-cold's are also the first of their question.
//
// The same file runs on an older tree (it uses only queries' long-standing
// fields), so figures before and after a change come from one command:
//
//	go test ./fleetgraph -run '^$' -bench BenchmarkFleetScale -benchtime 20x
func BenchmarkFleetScale(b *testing.B) {
	sizes := []int{10_000, 50_000}
	if v := os.Getenv("KUBEPACT_BENCH_SCALE"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil || n < 100 {
			b.Fatalf("KUBEPACT_BENCH_SCALE=%q: want a number of services, at least 100", v)
		}
		sizes = []int{n}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			revs, tgts := syntheticN(n, 3*n)
			const domain = "registry.example.com/shop"
			revs = append(revs, &fleetgraph.Revision{Domain: domain, Name: "pay", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", n+1), Source: "synthetic"})
			for i := 0; i < n; i += 10 {
				r := *revs[i]
				r.Edges = append(slices.Clone(r.Edges), fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: "pay", Ref: "oci://" + domain + "/pay", Required: true, Compatibility: []string{"^1.0.0", "~1.0.0", ""}[i%3]})
				revs[i] = &r
			}
			var bld *fleetgraph.Builder
			b.Run("start", func(b *testing.B) {
				var cpu time.Duration
				var heap uint64
				for b.Loop() {
					bld = nil
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					cpu0 := cpuTime(b)
					bld = buildSynthetic(b, revs, tgts)
					cpu += cpuTime(b) - cpu0
					runtime.GC()
					runtime.ReadMemStats(&after)
					heap = after.HeapAlloc - before.HeapAlloc
				}
				b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
			})
			if bld == nil {
				bld = buildSynthetic(b, revs, tgts)
			}
			// Each query starts on a snapshot of its own, one target
			// changed since the one before, as a server's first call after
			// a change does: first-µs and first-cpu-µs are that call,
			// p50/p99 and cpu-µs/op the repeats on the same snapshot.
			moved := *tgts[0]
			var s *fleetgraph.Snapshot
			fresh := func(i int) {
				moved.Compliance = fleetgraph.Statuses()[i%5]
				if err := bld.UpsertTarget(&moved); err != nil {
					b.Fatal(err)
				}
				s = bld.Flush()
			}
			older, newer := payBundle(b, "1.0.0", true), payBundle(b, "1.1.0", false)
			queries := []struct {
				name string
				run  func() (any, error)
			}{
				{"search", func() (any, error) { return s.Search(fleetgraph.SearchQuery{Text: "svc-0004"}) }},
				{"search-unfiltered", func() (any, error) { return s.Search(fleetgraph.SearchQuery{}) }},
				{"graph-transitive", func() (any, error) {
					return s.Graph(fleetgraph.GraphQuery{Service: "svc-00042", Transitive: true})
				}},
				{"graph-hub-dependents", func() (any, error) {
					return s.Graph(fleetgraph.GraphQuery{Service: "pay", Direction: fleetgraph.DirectionDependents, Transitive: true})
				}},
				{"impact-hub", func() (any, error) { return s.Impact(b.Context(), older, newer, nil) }},
				{"status", func() (any, error) { return s.Status(fleetgraph.StatusQuery{}) }},
			}
			for i, q := range queries {
				fresh(i + 1)
				b.Run(q.name, func(b *testing.B) { measureQuery(b, q.run) })
			}
			// impact-hub-first: every call is the first on its snapshot
			// (one published before each, outside the figures), so its
			// p50 and cpu-µs/op are the first call's over many snapshots.
			// impact-hub-cold also asks for a bound never asked before
			// (5,001 consumers and up: the same walk and cost), so no
			// earlier walk of the same question exists.
			for _, cold := range []bool{false, true} {
				name := "impact-hub-first"
				if cold {
					name = "impact-hub-cold"
				}
				b.Run(name, func(b *testing.B) {
					var times []time.Duration
					var cpu time.Duration
					i := 0
					for b.Loop() {
						b.StopTimer()
						i++
						fresh(i)
						var opts *fleetgraph.ImpactOptions
						if cold {
							opts = &fleetgraph.ImpactOptions{MaxConsumers: 5000 + i}
						}
						b.StartTimer()
						t0, c0 := time.Now(), cpuTime(b)
						if _, err := s.Impact(b.Context(), older, newer, opts); err != nil {
							b.Fatal(err)
						}
						cpu += cpuTime(b) - c0
						times = append(times, time.Since(t0))
					}
					slices.Sort(times)
					b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(cpu.Microseconds())/float64(len(times)), "cpu-µs/op")
				})
			}
		})
	}
}

// measureQuery runs q b.N times and reports latency percentiles, CPU time
// per call and the answer's size.
func measureQuery(b *testing.B, q func() (any, error)) {
	b.Helper()
	t0, c0 := time.Now(), cpuTime(b)
	res, err := q()
	first, firstCPU := time.Since(t0), cpuTime(b)-c0
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var times []time.Duration
	cpu0 := cpuTime(b)
	for b.Loop() {
		t0 := time.Now()
		if _, err := q(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	cpu := cpuTime(b) - cpu0
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(times)), "cpu-µs/op")
	b.ReportMetric(float64(len(raw)), "answer-B")
	b.ReportMetric(float64(first.Microseconds()), "first-µs")
	b.ReportMetric(float64(firstCPU.Microseconds()), "first-cpu-µs")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
