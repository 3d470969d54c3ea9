package source_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/internal/fleetgen"
)

// targetState writes a target-state file of n targets shaped like Pacto's
// fixture (labels, coverage, a finding on every tenth).
func targetState(n int) []byte {
	var b strings.Builder
	b.WriteString("schemaVersion: pacto.dev/fleet-targets/v1\ntargets:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - scope: cluster-%d\n    kind: kubernetes-workload\n    name: ns-%d/svc-%d\n    service: svc-%d\n    requestedRef: svc-%d:1.%d.0\n    compliance: Compliant\n    coverage: {evaluated: 4, required: 4}\n    evidenceAt: 2026-07-31T12:00:00Z\n    labels: {env: production, region: eu}\n", i%7, i%50, i, i%3000, i%3000, i%9)
		if i%10 == 0 {
			b.WriteString("    findings:\n      - {code: DRIFT, severity: error, message: drifted}\n")
		}
	}
	return []byte(b.String())
}

// BenchmarkDecodeTargetState decodes 5k and 50k targets: the ratio of
// ns/op and B/op shows whether decoding grows linearly.
func BenchmarkDecodeTargetState(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		raw := targetState(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				ts, _, err := source.DecodeTargetState(raw)
				if err != nil || len(ts) != n {
					b.Fatalf("%d targets, %v", len(ts), err)
				}
			}
		})
	}
}

// localFleet writes the benchmarks' fleet of n bundles under dir
// (internal/fleetgen).
func localFleet(b *testing.B, dir string, n int) {
	b.Helper()
	if err := fleetgen.Write(dir, n); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLocalFleetStart measures what `kubepact mcp --fleet DIR` does
// before it answers: scanning a directory of bundles, loading each
// (packing it for its identity), validating it and building the first
// snapshot. It runs 1,000 services unless KUBEPACT_BENCH_SCALE says
// otherwise, and reports the CPU time (user + system) of a start beside
// its wall time, and the heap the snapshot keeps:
//
//	KUBEPACT_BENCH_SCALE=10000 go test ./fleetgraph/source -run '^$' -bench BenchmarkLocalFleetStart -benchtime 1x
func BenchmarkLocalFleetStart(b *testing.B) {
	n := 1000
	if v := os.Getenv("KUBEPACT_BENCH_SCALE"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 10 {
			b.Fatalf("KUBEPACT_BENCH_SCALE=%q: want a number of services, at least 10", v)
		}
	}
	dir := b.TempDir()
	localFleet(b, dir, n)
	b.ResetTimer()
	var cpu time.Duration
	var heap uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime(b)
		bld := fleetgraph.NewBuilder(nil)
		snap := source.NewFeed(bld, []source.Source{&source.LocalSource{Dir: dir}}).Collect(b.Context(), nil)
		cpu += cpuTime(b) - cpu0
		if _, revs, _ := snap.Counts(); revs != n {
			b.Fatalf("%d revisions loaded, want %d: %v", revs, n, snap.Meta().Limitations)
		}
		if res, err := snap.Status(fleetgraph.StatusQuery{Invalid: true}); err != nil || res.Total != 0 {
			b.Fatalf("the synthetic bundles must be valid (or the start skips work): %d invalid, %v %+v", res.Total, err, res.Items[:min(1, len(res.Items))])
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(snap)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/bundle")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLocalFleetRecollect measures a re-read of an unchanged local
// fleet, what Watch does after any change under the directory: every
// bundle is loaded (and packed for its identity) again, and the snapshot
// published. Its CPU per bundle beside BenchmarkLocalFleetStart's is what
// a re-read saves by not validating unchanged bundles again.
//
//	KUBEPACT_BENCH_SCALE=1000 go test ./fleetgraph/source -run '^$' -bench BenchmarkLocalFleetRecollect -benchtime 1x
func BenchmarkLocalFleetRecollect(b *testing.B) {
	n := 1000
	if v := os.Getenv("KUBEPACT_BENCH_SCALE"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 10 {
			b.Fatalf("KUBEPACT_BENCH_SCALE=%q: want a number of services, at least 10", v)
		}
	}
	dir := b.TempDir()
	localFleet(b, dir, n)
	feed := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{&source.LocalSource{Dir: dir}})
	feed.Collect(b.Context(), nil)
	b.ResetTimer()
	var cpu time.Duration
	for b.Loop() {
		cpu0 := cpuTime(b)
		snap := feed.Collect(b.Context(), nil)
		cpu += cpuTime(b) - cpu0
		if _, revs, _ := snap.Counts(); revs != n {
			b.Fatalf("%d revisions loaded, want %d: %v", revs, n, snap.Meta().Limitations)
		}
		if res, err := snap.Status(fleetgraph.StatusQuery{Invalid: true}); err != nil || res.Total != 0 {
			b.Fatalf("%d invalid after a re-read, %v", res.Total, err)
		}
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/bundle")
}

// BenchmarkLocalFleetWarmStart measures a start with the cache a first
// start wrote (LocalSource.CacheDir): a fresh source each time, so only
// the file carries identities and verdicts over, as from one process to
// the next. It reports the cold start that wrote the cache beside it, and
// the cache file's size:
//
//	KUBEPACT_BENCH_SCALE=10000 go test ./fleetgraph/source -run '^$' -bench BenchmarkLocalFleetWarmStart -benchtime 1x
func BenchmarkLocalFleetWarmStart(b *testing.B) {
	n := 1000
	if v := os.Getenv("KUBEPACT_BENCH_SCALE"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 10 {
			b.Fatalf("KUBEPACT_BENCH_SCALE=%q: want a number of services, at least 10", v)
		}
	}
	dir, cacheDir := b.TempDir(), b.TempDir()
	localFleet(b, dir, n)
	start := func() (*fleetgraph.Snapshot, time.Duration) {
		cpu0 := cpuTime(b)
		snap := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{&source.LocalSource{Dir: dir, CacheDir: cacheDir}}).Collect(b.Context(), nil)
		if _, revs, _ := snap.Counts(); revs != n {
			b.Fatalf("%d revisions loaded, want %d: %v", revs, n, snap.Meta().Limitations)
		}
		return snap, cpuTime(b) - cpu0
	}
	t0 := time.Now()
	_, coldCPU := start()
	coldWall := time.Since(t0)
	files, _ := filepath.Glob(filepath.Join(cacheDir, "*"))
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
		}
	}
	b.ResetTimer()
	var cpu time.Duration
	var heap uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		snap, c := start()
		cpu += c
		if res, err := snap.Status(fleetgraph.StatusQuery{Invalid: true}); err != nil || res.Total != 0 {
			b.Fatalf("%d invalid on a warm start, %v", res.Total, err)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(snap)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(coldWall.Milliseconds()), "cold-wall-ms")
	b.ReportMetric(float64(coldCPU.Milliseconds()), "cold-cpu-ms")
	b.ReportMetric(float64(size)/1024, "cache-KiB")
}
