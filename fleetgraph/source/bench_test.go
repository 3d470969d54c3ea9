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

// localFleet writes n bundle directories under dir, each a contract with
// an OpenAPI interface, a readiness declaration and benchDeps
// dependencies on other services of the fleet: the shape a laptop fleet
// of many small services has.
func localFleet(b *testing.B, dir string, n int) {
	b.Helper()
	const deps = 5
	// each service gets its own spec (see fleetSpec)
	for i := range n {
		var y strings.Builder
		fmt.Fprintf(&y, "pactoVersion: \"2.0\"\nservice:\n  name: svc-%05d\n  version: 1.%d.0\n  owner:\n    team: team-%d\n", i, i%7, i%40)
		y.WriteString("interfaces:\n  - name: http\n    type: openapi\n    ref: interfaces/openapi.yaml\n    visibility: internal\nworkload: service\n")
		y.WriteString("capabilities:\n  - type: health\n    binding: {type: http, interface: http, path: /healthz}\n")
		y.WriteString("dependencies:\n")
		for d := range deps {
			j := (i*7919 + d*104729 + 1) % n
			fmt.Fprintf(&y, "  - name: svc-%05d\n    ref: oci://registry.example.com/team%d/svc-%05d\n    required: true\n    compatibility: ^1.0.0\n", j, j%40, j)
		}
		y.WriteString("readiness:\n  expires: 2099-12-31\n  minScore: 50\n  claims:\n    - {id: runbook, type: document, category: documentation, status: done, evidence: https://docs.example.com/runbook, weight: 100}\n")
		bd := filepath.Join(dir, fmt.Sprintf("team%d", i%40), fmt.Sprintf("svc-%05d", i))
		if err := os.MkdirAll(filepath.Join(bd, "interfaces"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bd, "pacto.yaml"), []byte(y.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bd, "interfaces", "openapi.yaml"), []byte(fleetSpec(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// fleetSpec is service i's OpenAPI document: distinct from every other
// service's (title, paths, schema names and fields depend on i), so a cache
// keyed by a spec's content cannot make the fleet cheaper than a real one,
// and shaped like a small real service: a few operations with parameters,
// request and response bodies, and components reached by $ref (an item
// is an allOf of a base schema and its own fields, as specs often say).
func fleetSpec(i int) string {
	var s strings.Builder
	res := fmt.Sprintf("res%d", i%97)
	fmt.Fprintf(&s, "openapi: 3.0.3\ninfo: {title: svc-%05d, version: 1.%d.0, description: service %d of the fleet}\n", i, i%7, i)
	s.WriteString("paths:\n  /healthz:\n    get:\n      operationId: getHealth\n      responses:\n        \"200\": {description: alive}\n")
	fmt.Fprintf(&s, "  /%s:\n    get:\n      operationId: list%d\n      parameters:\n        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: %d}}\n        - {name: cursor, in: query, schema: {type: string}}\n", res, i, 50+i%200)
	fmt.Fprintf(&s, "      responses:\n        \"200\":\n          description: a page\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Page%d\"}\n", i)
	fmt.Fprintf(&s, "    post:\n      operationId: create%d\n      requestBody:\n        required: true\n        content:\n          application/json:\n            schema: {$ref: \"#/components/schemas/Item%d\"}\n", i, i)
	fmt.Fprintf(&s, "      responses:\n        \"201\":\n          description: created\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Item%d\"}\n        \"400\": {$ref: \"#/components/responses/Problem\"}\n", i)
	fmt.Fprintf(&s, "  /%s/{id}:\n    parameters:\n      - {name: id, in: path, required: true, schema: {type: string, maxLength: %d}}\n", res, 16+i%48)
	fmt.Fprintf(&s, "    get:\n      operationId: get%d\n      responses:\n        \"200\":\n          description: one item\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Item%d\"}\n        \"404\": {$ref: \"#/components/responses/Problem\"}\n", i, i)
	fmt.Fprintf(&s, "    delete:\n      operationId: delete%d\n      responses:\n        \"204\": {description: deleted}\n        \"404\": {$ref: \"#/components/responses/Problem\"}\n", i)
	s.WriteString("components:\n  responses:\n    Problem:\n      description: what went wrong\n      content:\n        application/json:\n          schema:\n            type: object\n            required: [title]\n            properties: {title: {type: string}, detail: {type: string}, status: {type: integer}}\n")
	fmt.Fprintf(&s, "  schemas:\n    Page%d:\n      type: object\n      properties:\n        items: {type: array, items: {$ref: \"#/components/schemas/Item%d\"}}\n        next: {type: string, nullable: true}\n", i, i)
	fmt.Fprintf(&s, "    Base%d:\n      type: object\n      required: [id]\n      properties:\n        id: {type: string}\n        created: {type: string, format: date-time}\n", i)
	fmt.Fprintf(&s, "    Item%d:\n      allOf:\n        - {$ref: \"#/components/schemas/Base%d\"}\n        - type: object\n          properties:\n", i, i)
	for f := range 3 + i%6 {
		switch (i + f) % 4 {
		case 0:
			fmt.Fprintf(&s, "            field%d_%d: {type: string, maxLength: %d}\n", i%31, f, 10+f)
		case 1:
			fmt.Fprintf(&s, "            count%d_%d: {type: integer, minimum: 0}\n", i%29, f)
		case 2:
			fmt.Fprintf(&s, "            state%d: {type: string, enum: [new, active, retired]}\n", f)
		default:
			fmt.Fprintf(&s, "            tags%d: {type: array, items: {type: string}}\n", f)
		}
	}
	return s.String()
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
