package catalog_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubepact/kubepact/internal/catalog"
	"github.com/kubepact/kubepact/test/testregistry"
)

// BenchmarkRegistryCatalog compares, on one registry, resolving a root
// with 50 dependencies from nothing (every manifest, config and layer
// pulled) with refreshing it when nothing moved (one manifest resolution
// per tag, content kept by digest). Run the two side by side:
//
//	go test ./internal/catalog -run '^$' -bench RegistryCatalog -benchmem
func BenchmarkRegistryCatalog(b *testing.B) {
	reg := testregistry.New(b, nil)
	c := client(b)
	var deps []dep
	for i := range 50 {
		name := fmt.Sprintf("dep%02d", i)
		push(b, c, reg.Host, name, "1.0.0", name, "1.0.0")
		deps = append(deps, dep{name, "oci://" + reg.Host + "/acme/" + name + ":1.0.0", ""})
	}
	push(b, c, reg.Host, "root", "1.0.0", "root", "1.0.0", deps...)
	opts := &catalog.Options{Roots: []string{"oci://" + reg.Host + "/acme/root:1.0.0"}, Client: c}

	b.Run("build-cold", func(b *testing.B) {
		for b.Loop() {
			cat, err := catalog.Build(b.Context(), opts)
			if err != nil || len(cat.Closure().Revisions) != 51 {
				b.Fatalf("%v", err)
			}
		}
	})
	b.Run("refresh-unchanged", func(b *testing.B) {
		live, err := catalog.NewLive(b.Context(), opts)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if cur, changed := live.Refresh(b.Context()); changed || len(cur.Closure().Revisions) != 51 {
				b.Fatal("an unchanged registry changed the catalog")
			}
		}
	})
}

// BenchmarkLocalLayers resolves a dense local graph: 8 layers of 8
// bundles, each depending on every bundle of the next layer (448 edges,
// 8^7 paths to the last layer, of which maxPathsPerRevision are kept).
func BenchmarkLocalLayers(b *testing.B) {
	dir := b.TempDir()
	const layers, width = 8, 8
	for l := range layers {
		for i := range width {
			var deps []dep
			if l+1 < layers {
				for j := range width {
					deps = append(deps, dep{fmt.Sprintf("s%d-%d", l+1, j), fmt.Sprintf("../s%d-%d", l+1, j), ""})
				}
			}
			writeBundle(b, filepath.Join(dir, fmt.Sprintf("s%d-%d", l, i)), fmt.Sprintf("s%d-%d", l, i), "1.0.0", deps...)
		}
	}
	opts := &catalog.Options{Roots: []string{filepath.Join(dir, "s0-0")}}
	for b.Loop() {
		cat, err := catalog.Build(b.Context(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if cl := cat.Closure(); len(cl.Revisions) != 1+width*(layers-1) || len(cl.Edges) != width+width*width*(layers-2) {
			b.Fatalf("revisions %d edges %d", len(cl.Revisions), len(cl.Edges))
		}
	}
}

// BenchmarkSlowRegistryCatalog resolves a root with 16 dependencies from
// a registry that waits 5 ms before every answer, one reference at a
// time (concurrency=1, as before depth-at-a-time resolution) and four at
// a time (the default). Compare the two in one run:
//
//	go test ./internal/catalog -run '^$' -bench SlowRegistryCatalog -benchmem
func BenchmarkSlowRegistryCatalog(b *testing.B) {
	reg := testregistry.New(b, &testregistry.Options{Wrap: testregistry.Delay(5 * time.Millisecond)})
	c := client(b)
	var deps []dep
	for i := range 16 {
		name := fmt.Sprintf("dep%02d", i)
		push(b, c, reg.Host, name, "1.0.0", name, "1.0.0")
		deps = append(deps, dep{name, "oci://" + reg.Host + "/acme/" + name + ":1.0.0", ""})
	}
	push(b, c, reg.Host, "root", "1.0.0", "root", "1.0.0", deps...)
	for _, n := range []int{1, catalog.DefaultConcurrency} {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			opts := &catalog.Options{Roots: []string{"oci://" + reg.Host + "/acme/root:1.0.0"}, Client: c, Concurrency: n}
			for b.Loop() {
				cat, err := catalog.Build(b.Context(), opts)
				if err != nil || len(cat.Closure().Revisions) != 17 {
					b.Fatalf("%v %+v", err, cat.Meta())
				}
			}
		})
	}
}
