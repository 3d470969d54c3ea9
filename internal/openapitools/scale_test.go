package openapitools

import (
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/test/bigspec"
	"github.com/kubepact/kubepact/test/largeapi"
)

func largeFS(tb testing.TB) fstest.MapFS {
	tb.Helper()
	fsys := fstest.MapFS{}
	for name, data := range bigspec.WriteBundle(bigspec.Large) {
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// TestProjectLarge projects the generated large API and checks that every
// operation becomes a tool whose $defs hold only what its schema reaches.
func TestProjectLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 7.6 MB API")
	}
	fsys := largeFS(t)
	c, err := project(t.Context(), fsys, []spec{{name: "api", file: "openapi.json"}}, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range c.Withheld {
		t.Errorf("withheld %s: %s %s", w.Name, w.Code, w.Reason)
	}
	if want := bigspec.Large.Operations(); len(c.Tools) != want {
		t.Errorf("%d tools; want %d", len(c.Tools), want)
	}
	total := 0
	for _, tl := range c.Tools {
		total += len(tl.InputSchema)
	}
	t.Logf("%d tools, %d bytes of input schemas (document: %d bytes)", len(c.Tools), total, len(fsys["openapi.json"].Data))
}

// BenchmarkProjectLarge projects the generated large API (1,250
// operations, 950 component schemas, 7.6 MB of JSON) from bytes in memory:
// what `kubepact mcp BUNDLE --allow-writes` does before it answers
// initialize. It reports the heap left live after projection.
func BenchmarkProjectLarge(b *testing.B) {
	fsys := largeFS(b)
	b.ReportAllocs()
	var live uint64
	for b.Loop() {
		c, err := project(b.Context(), fsys, []spec{{name: "api", file: "openapi.json"}}, &Options{AllowWrites: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc
		runtime.KeepAlive(c)
		b.StartTimer()
	}
	b.ReportMetric(float64(live)/(1<<20), "live-MiB")
}

// BenchmarkProjectGitHub is BenchmarkProjectLarge on GitHub's REST API
// description (`make github-spec`; skipped without it): 1,223 operations,
// 13 MB of JSON.
func BenchmarkProjectGitHub(b *testing.B) {
	fsys := fstest.MapFS{"api.json": &fstest.MapFile{Data: largeapi.GitHubSpec(b)}}
	b.ReportAllocs()
	var live uint64
	for b.Loop() {
		c, err := project(b.Context(), fsys, []spec{{name: "rest", file: "api.json"}}, &Options{AllowWrites: true, MaxSpecBytes: 16 << 20})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc
		runtime.KeepAlive(c)
		b.StartTimer()
	}
	b.ReportMetric(float64(live)/(1<<20), "live-MiB")
}
