package source_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestLoadWithin: a load bounded to fewer bytes than a bundle holds stops
// there, with ErrTooLarge, for a directory in the workspace and for a
// pull from a real registry on loopback alike; within the bound it
// loads. The bundles kept read are bounded in bytes: one larger than
// CacheBytes is not kept, and keeping another evicts the oldest.
func TestLoadWithin(t *testing.T) {
	ws := t.TempDir()
	write := func(name string, pad int) string {
		dir := filepath.Join(ws, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"pacto.yaml":  "pactoVersion: \"2.0\"\nservice: {name: " + name + ", version: 1.0.0}\n",
			"docs/pad.md": strings.Repeat("x", pad),
		}
		for f, body := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	write("big", 2<<20)
	write("small", 1<<10)
	write("m1", 600<<10)
	write("m2", 600<<10)

	reg := testregistry.New(t, nil)
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	push := func(name string) string {
		b, err := bundle.LoadDir(filepath.Join(ws, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		img, err := b.Image()
		if err != nil {
			t.Fatal(err)
		}
		r, err := oci.ParseReference(reg.Host + "/b/" + name + ":1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Push(t.Context(), r, img); err != nil {
			t.Fatal(err)
		}
		return "oci://" + reg.Host + "/b/" + name + ":1"
	}
	bigRef, smallRef, m1, m2 := push("big"), push("small"), push("m1"), push("m2")

	l := source.NewRefLoader(&source.RefLoaderOptions{Workspace: ws, Client: client, CacheBytes: 1 << 20})
	for _, ref := range []string{"big", bigRef} {
		if _, err := l.LoadWithin(t.Context(), ref, 1<<20); !errors.Is(err, source.ErrTooLarge) {
			t.Errorf("%s within 1 MiB: %v; want ErrTooLarge", ref, err)
		}
		b, err := l.LoadWithin(t.Context(), ref, 4<<20)
		if err != nil || b.FS.Size() < 2<<20 {
			t.Errorf("%s within 4 MiB: %v", ref, err)
		}
	}
	if _, err := l.LoadWithin(t.Context(), smallRef, 1<<20); err != nil {
		t.Errorf("small within 1 MiB: %v", err)
	}
	// big (2 MiB) was not kept: past CacheBytes a load reads it again,
	// and so stops at the bound again.
	if _, err := l.LoadWithin(t.Context(), bigRef, 1<<20); !errors.Is(err, source.ErrTooLarge) {
		t.Errorf("big again within 1 MiB: %v; a bundle larger than CacheBytes must not be kept", err)
	}
	fetches := func(ref string) int {
		before := reg.BlobFetches()
		if _, err := l.Load(t.Context(), ref); err != nil {
			t.Fatal(err)
		}
		return reg.BlobFetches() - before
	}
	if fetches(m1) == 0 || fetches(m1) != 0 {
		t.Errorf("m1: want it pulled once, then kept")
	}
	if fetches(m2) == 0 || fetches(m1) == 0 {
		t.Errorf("m1 after m2: 1.2 MiB do not fit CacheBytes 1 MiB, so keeping m2 must evict m1")
	}
}
