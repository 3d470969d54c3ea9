package bundle_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
)

// TestLoadLayerFile: a packed bundle file loads as its layer does, with the
// same identity and the file as its source; a file larger than a bundle's
// total is refused before it is read in full; a missing file is the
// *fs.PathError os gives; a file that is not a packed bundle is the
// archive's format error.
func TestLoadLayerFile(t *testing.T) {
	dir := filepath.Join(examplesDir(t), "catalog")
	var layer bytes.Buffer
	if err := archive.Pack(&layer, os.DirFS(dir), nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(path, layer.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := bundle.LoadLayer(layer.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bundle.LoadLayerFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Identity != want.Identity || got.Source.Ref != path {
		t.Errorf("LoadLayerFile: identity %s, source %q; want %s and %q", got.Identity, got.Source.Ref, want.Identity, path)
	}

	small := &bundle.LoadOptions{Limits: archive.Limits{MaxTotalBytes: int64(layer.Len() - 1)}}
	if _, err := bundle.LoadLayerFile(path, small); !errors.Is(err, bundle.ErrLayerFileTooLarge) {
		t.Errorf("a file above MaxTotalBytes: %v, want ErrLayerFileTooLarge", err)
	}
	var pe *fs.PathError
	if _, err := bundle.LoadLayerFile(filepath.Join(t.TempDir(), "absent.tar.gz"), nil); !errors.As(err, &pe) {
		t.Errorf("a missing file: %v, want an *fs.PathError", err)
	}
	notPacked := filepath.Join(t.TempDir(), "pacto.yaml")
	if err := os.WriteFile(notPacked, []byte("pactoVersion: \"1.0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ae *archive.Error
	if _, err := bundle.LoadLayerFile(notPacked, nil); !errors.As(err, &ae) || !errors.Is(ae.Kind, archive.ErrFormat) {
		t.Errorf("a file that is not packed: %v, want the archive's format error", err)
	}
}
