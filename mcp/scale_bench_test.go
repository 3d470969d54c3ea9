package mcp

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/bigspec"
	"github.com/kubepact/kubepact/test/largeapi"
)

// BenchmarkServeLargeAPI builds the server of `kubepact mcp BUNDLE
// --allow-writes` for the generated large API (1,250 operations, 7.8 MB of
// JSON): loading the bundle, projecting it and registering its tools —
// everything before the server can answer initialize.
func BenchmarkServeLargeAPI(b *testing.B) {
	dir := b.TempDir()
	for name, data := range bigspec.WriteBundle(bigspec.Large) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		capabilityServer(b, dir, &openapitools.Options{AllowWrites: true}, nil)
	}
}

// BenchmarkServeGitHub is BenchmarkServeLargeAPI on GitHub's REST API
// description (`make github-spec`; skipped without it): 1,223 operations,
// 13 MB of JSON.
func BenchmarkServeGitHub(b *testing.B) {
	spec := largeapi.GitHubSpec(b)
	dir := b.TempDir()
	contract := "pactoVersion: \"2.0\"\nservice:\n  name: github\n  version: 1.0.0\ninterfaces:\n  - name: rest\n    type: openapi\n    ref: openapi.json\n"
	for name, data := range map[string][]byte{"pacto.yaml": []byte(contract), "openapi.json": spec} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bun, err := bundle.LoadDir(dir, &bundle.LoadOptions{Limits: archive.Limits{MaxFileBytes: 16 << 20, MaxTotalBytes: 32 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var live uint64
	for b.Loop() {
		c, err := openapitools.Project(b.Context(), bun, &openapitools.Options{AllowWrites: true, MaxSpecBytes: 16 << 20})
		if err != nil {
			b.Fatal(err)
		}
		s := newTestServer(b, &Options{Families: []Family{FamilyCapability}, Capability: &CapabilityBundle{Bundle: bun, Capability: c}})
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
		b.StartTimer()
	}
	// The heap the projection and the server keep, beyond the loaded bundle.
	b.ReportMetric(float64(live)/(1<<20), "live-MiB")
}
