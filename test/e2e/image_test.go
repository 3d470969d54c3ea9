//go:build e2e

package e2e

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// imageEntrypoint is the entrypoint the kubepact image declares (hack/image,
// Dockerfile): the binary a container of it runs.
const imageEntrypoint = "/kubepact"

// images pulls what a kubelet would run for an image reference from the
// suite's plain-HTTP registry: the entrypoint binary of its one layer,
// once per digest.
type images struct {
	mu   sync.Mutex
	dir  string
	bins map[string]string // digest → binary
}

// binary returns the path of the entrypoint of image ref
// (host/repo:tag@sha256:… or host/repo@sha256:…), pulled by digest as a
// kubelet pulls it, after checking that the image runs it as the
// entrypoint.
func (im *images) binary(t *testing.T, ref string) string {
	t.Helper()
	r, err := registry.ParseReference(ref)
	if err != nil {
		t.Fatalf("image %q: %v", ref, err)
	}
	digest := r.Reference
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		digest = ref[i+1:]
	}
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("image %q is not pinned by digest: the install names images by digest", ref)
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	if p, ok := im.bins[digest]; ok {
		return p
	}
	repo, err := remote.NewRepository(r.Registry + "/" + r.Repository)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	ctx := t.Context()
	desc, rc, err := repo.FetchReference(ctx, digest)
	if err != nil {
		t.Fatalf("pulling image %s: %v", ref, err)
	}
	raw, err := content.ReadAll(rc, desc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatalf("image %s: its manifest: %v", ref, err)
	}
	cfgRaw, err := content.FetchAll(ctx, repo, manifest.Config)
	if err != nil {
		t.Fatal(err)
	}
	var cfg ocispec.Image
	if err := json.Unmarshal(cfgRaw, &cfg); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{imageEntrypoint}) {
		t.Fatalf("image %s runs %q; the suite runs kubepact's image, whose entrypoint is %s", ref, cfg.Config.Entrypoint, imageEntrypoint)
	}
	if im.bins == nil {
		im.bins = map[string]string{}
	}
	bin := filepath.Join(im.dir, strings.TrimPrefix(digest, "sha256:")[:16], "kubepact")
	for _, layer := range manifest.Layers {
		if err := extract(t, repo, layer, strings.TrimPrefix(imageEntrypoint, "/"), bin); err == nil {
			im.bins[digest] = bin
			return bin
		} else if !errors.Is(err, errNotInLayer) {
			t.Fatalf("image %s: %v", ref, err)
		}
	}
	t.Fatalf("image %s has no %s in its layers", ref, imageEntrypoint)
	return ""
}

var errNotInLayer = errors.New("not in this layer")

// extract writes the file name of a gzipped tar layer to dst, executable.
func extract(t *testing.T, repo *remote.Repository, layer ocispec.Descriptor, name, dst string) error {
	t.Helper()
	rc, err := repo.Fetch(t.Context(), layer)
	if err != nil {
		return err
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		return fmt.Errorf("layer %s: %w", layer.Digest, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return errNotInLayer
		}
		if err != nil {
			return fmt.Errorf("layer %s: %w", layer.Digest, err)
		}
		if strings.TrimPrefix(h.Name, "./") != name || h.Typeflag != tar.TypeReg {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}
