package sidecar_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/test/bigspec"
)

// TestToolSurfaceIgnoresUpstreamPort: the port the webhook picks per Pod
// changes where the sidecar's calls go, not what its tools are, so the
// surface the operator records once per digest holds for every Pod; the
// exposure flags do change it, and a lock file the operator cannot read
// is refused rather than guessed.
func TestToolSurfaceIgnoresUpstreamPort(t *testing.T) {
	b, err := bundle.LoadDir(filepath.Join("..", "..", "examples", "bundles", "catalog"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(port int, change ...func(*sidecar.Config)) sidecar.Config {
		c := sidecar.DefaultConfig()
		c.Bundle, c.BundleDigest = "oci://r.example/b@"+string(b.Identity), string(b.Identity)
		c.Upstream = "http://127.0.0.1:" + strconv.Itoa(port)
		c.Registry.PlainHTTP, c.Registry.NoCache = true, true
		for _, f := range change {
			f(&c)
		}
		return c
	}
	a, err := sidecar.ToolSurface(t.Context(), cfg(8080), b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, "sha256:") {
		t.Fatalf("surface %q is not a sha256 digest", a)
	}
	other, err := sidecar.ToolSurface(t.Context(), cfg(9999), b)
	if err != nil || other != a {
		t.Errorf("port 9999: %q %v, want %q", other, err, a)
	}
	writes, err := sidecar.ToolSurface(t.Context(), cfg(8080, func(c *sidecar.Config) { c.Tools.AllowWrites = true }), b)
	if err != nil || writes == a {
		t.Errorf("--allow-writes: %q %v, want a surface other than %q", writes, err, a)
	}
	if _, err := sidecar.ToolSurface(t.Context(), cfg(8080, func(c *sidecar.Config) { c.ToolsLock = "/x/tools.lock.json" }), b); err == nil || !strings.Contains(err.Error(), "--tools-lock") {
		t.Errorf("--tools-lock: %v, want a refusal naming it", err)
	}
}

// BenchmarkToolSurface measures what the reconciler spends once per new
// digest to record the tool surface of each tool mode: the example catalog
// bundle, and a bundle shaped like the large public APIs
// (test/bigspec.Large, ~1,250 operations). A new digest costs the sum of
// the three modes. Compare as ratios; absolute times depend on the
// machine.
func BenchmarkToolSurface(b *testing.B) {
	large := b.TempDir()
	for name, data := range bigspec.WriteBundle(bigspec.Large) {
		if err := os.WriteFile(filepath.Join(large, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, dir string }{
		{"catalog", filepath.Join("..", "..", "examples", "bundles", "catalog")},
		{"large", large},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bun, err := bundle.LoadDir(bc.dir, &bundle.LoadOptions{Limits: archive.Limits{MaxFileBytes: 64 << 20, MaxTotalBytes: 64 << 20}})
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range []string{"all", "discover", "auto"} {
				b.Run(mode, func(b *testing.B) {
					cfg := sidecar.DefaultConfig()
					cfg.Bundle, cfg.BundleDigest, cfg.Upstream = "oci://r.example/b@"+string(bun.Identity), string(bun.Identity), "http://127.0.0.1:8080"
					cfg.Tools.ToolMode = mode
					b.ReportAllocs()
					for b.Loop() {
						if _, err := sidecar.ToolSurface(b.Context(), cfg, bun); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
