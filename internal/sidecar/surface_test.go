package sidecar_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/internal/openapitools"
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

// TestToolSurfacesMatchEachMode: the surfaces ToolSurfaces derives for
// the three tool modes from one projection are, digest for digest and
// error for error, those ToolSurface computes projecting in each mode
// alone (the sidecar reports the same at run time: TestToolSurface* in
// package controllers and the sidecar's process test hold that). Over
// every bundle in the repository, the catalog among them, a generated API
// wider than auto lists one by one, and the catalog held to tools locks
// that record a mode (one of the modes is then refused).
func TestToolSurfacesMatchEachMode(t *testing.T) {
	root := filepath.Join("..", "..")
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "pacto.yaml" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name string
		b    *bundle.Bundle
	}
	var cases []tc
	for _, dir := range dirs {
		b, err := bundle.LoadDir(dir, nil)
		if err != nil {
			continue // not a bundle a sidecar could load either
		}
		rel, _ := filepath.Rel(root, dir)
		cases = append(cases, tc{rel, b})
	}
	if len(cases) < 5 {
		t.Fatalf("found %d bundles in the repository (%v), want the examples among them", len(cases), dirs)
	}
	wide := t.TempDir()
	for name, data := range bigspec.WriteBundle(bigspec.Shape{Resources: 30, Schemas: 40, DescriptionWords: 8}) {
		if err := os.WriteFile(filepath.Join(wide, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.LoadDir(wide, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tc{"wide", b})
	catalog := filepath.Join(root, "examples", "bundles", "catalog")
	for _, mode := range []string{openapitools.ToolModeAll, openapitools.ToolModeDiscover} {
		cases = append(cases, tc{"catalog locked in " + mode, lockedBundle(t, catalog, mode)})
	}

	modes := []string{openapitools.ToolModeAll, openapitools.ToolModeDiscover, openapitools.ToolModeAuto}
	projected := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := sidecar.DefaultConfig()
			cfg.Bundle, cfg.BundleDigest, cfg.Upstream = "oci://r.example/b@"+string(c.b.Identity), string(c.b.Identity), "http://127.0.0.1:8080"
			cfg.Tools.ToolMode = "discover" // not read: each mode's is set
			got, err := sidecar.ToolSurfaces(t.Context(), cfg, c.b, modes)
			for i, mode := range modes {
				one := cfg
				one.Tools.ToolMode = mode
				want, wantErr := sidecar.ToolSurface(t.Context(), one, c.b)
				var gotDigest, gotErr string
				switch {
				case err != nil:
					gotErr = err.Error()
				case len(got) != len(modes):
					t.Fatalf("%d surfaces for %d modes", len(got), len(modes))
				case got[i].Mode != mode:
					t.Fatalf("surface %d is mode %q's, want %q's", i, got[i].Mode, mode)
				case got[i].Err != nil:
					gotErr = got[i].Err.Error()
				default:
					gotDigest = got[i].Digest
				}
				if wantErr != nil {
					if gotErr != wantErr.Error() {
						t.Errorf("mode %s: digest %q, error %q; want ToolSurface's error %q", mode, gotDigest, gotErr, wantErr)
					}
					continue
				}
				projected++
				if gotDigest != want || gotErr != "" {
					t.Errorf("mode %s: digest %q, error %q; want ToolSurface's digest %s", mode, gotDigest, gotErr, want)
				}
			}
		})
	}
	if projected == 0 {
		t.Fatal("no bundle projected in any mode: the comparison compared errors only")
	}
}

// lockedBundle is the bundle in dir with a tools lock of its tools that
// records tool mode mode.
func lockedBundle(t *testing.T, dir, mode string) *bundle.Bundle {
	t.Helper()
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openapitools.Project(t.Context(), b, &openapitools.Options{ToolMode: mode})
	if err != nil {
		t.Fatal(err)
	}
	l := openapitools.NewLock(c)
	l.RecordMode(c)
	raw, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, openapitools.LockFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err = bundle.LoadDir(out, nil); err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkToolSurface measures what the reconciler spends once per new
// digest to record the tool surface of each tool mode: the example catalog
// bundle, and a bundle shaped like the large public APIs
// (test/bigspec.Large, ~1,250 operations). A new digest costs the sum of
// the three modes. Compare as ratios; absolute times depend on the
// machine. three is the three modes from one projection (ToolSurfaces),
// what the reconciler spends now.
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
			// What a new digest costs now: the three modes from one
			// projection (ToolSurfaces), against the sum of the above.
			b.Run("three", func(b *testing.B) {
				cfg := sidecar.DefaultConfig()
				cfg.Bundle, cfg.BundleDigest, cfg.Upstream = "oci://r.example/b@"+string(bun.Identity), string(bun.Identity), "http://127.0.0.1:8080"
				b.ReportAllocs()
				for b.Loop() {
					ss, err := sidecar.ToolSurfaces(b.Context(), cfg, bun, []string{"all", "discover", "auto"})
					if err != nil {
						b.Fatal(err)
					}
					for _, s := range ss {
						if s.Err != nil {
							b.Fatal(s.Err)
						}
					}
				}
			})
		})
	}
}
