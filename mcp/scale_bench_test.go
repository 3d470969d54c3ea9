package mcp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/bigspec"
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
