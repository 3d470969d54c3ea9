package bundle_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/pactocompat"
)

// LoadDir packs a directory once and reads the tar back without
// compressing and decompressing it: the layer, the identity and the files
// must be exactly those of packing with Pack, extracting the layer with
// Extract and building the image with NewImage, as LoadDir did before, on
// kubepact's examples and (when present) Pacto's demo bundles.
func TestLoadDirIdentityUnchanged(t *testing.T) {
	var dirs []string
	for _, root := range []string{filepath.Join("..", "examples", "bundles"), filepath.Join("validate", "testdata", "pacto20")} {
		dirs = append(dirs, bundleDirsUnder(t, root)...)
	}
	demo, skip, err := pactocompat.Lookup()
	switch {
	case err != nil:
		t.Fatal(err)
	case skip != "":
		t.Log("without Pacto's demo bundles: " + skip)
	default:
		dirs = append(dirs, bundleDirsUnder(t, demo)...)
	}
	if len(dirs) < 10 {
		t.Fatalf("%d bundle directories found: the corpora are missing", len(dirs))
	}
	for _, dir := range dirs {
		got, err := bundle.LoadDir(dir, nil)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		fsys := os.DirFS(dir)
		files, err := bundle.Files(fsys)
		if err != nil {
			t.Fatal(err)
		}
		var layer bytes.Buffer
		if err := archive.Pack(&layer, fsys, files); err != nil {
			t.Fatal(err)
		}
		labels := oci.Labels{}
		if c := got.Contract; c != nil {
			labels = oci.Labels{Name: c.Service.Name, Version: c.Service.Version, PactoVersion: c.PactoVersion}
		}
		want, err := oci.NewImage(layer.Bytes(), labels)
		if err != nil {
			t.Fatal(err)
		}
		img, err := got.Image()
		if err != nil {
			t.Fatal(err)
		}
		if got.Identity != want.Digest || !bytes.Equal(img.Layer, want.Layer) || !bytes.Equal(img.Config, want.Config) || !bytes.Equal(img.Manifest, want.Manifest) {
			t.Errorf("%s: identity %s, packing and extracting gives %s (layer, config or manifest bytes differ)", dir, got.Identity, want.Digest)
		}
		extracted, err := archive.Extract(bytes.NewReader(layer.Bytes()), archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if gp, wp := got.FS.Paths(), extracted.Paths(); !slices.Equal(gp, wp) {
			t.Errorf("%s: files %v, extracting the layer gives %v", dir, gp, wp)
		}
		for _, p := range extracted.Paths() {
			g, _ := got.FS.ReadFile(p)
			w, _ := extracted.ReadFile(p)
			if !bytes.Equal(g, w) {
				t.Errorf("%s: %s differs from the extracted layer's", dir, p)
			}
		}
	}
}

// bundleDirsUnder lists the directories below root holding a pacto.yaml.
func bundleDirsUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "pacto.yaml" {
			out = append(out, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
