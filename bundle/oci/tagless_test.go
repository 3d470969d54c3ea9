package oci_test

import (
	"errors"
	"testing"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestTaglessReference: a reference with neither tag nor digest names the
// highest release tag, as Pacto resolves the tagless refs its demo bundles
// use (oci://ghcr.io/trianalab/pacto-demo/platform-app-config).
func TestTaglessReference(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)
	want := map[string]*oci.Image{}
	for _, tag := range []string{"1.0.0", "1.10.0", "1.2.0", "2.0.0-rc.1", "latest", "v0.9.0"} {
		img := newImage(t, map[string]string{"pacto.yaml": "version " + tag}, oci.Labels{Name: "cfg", Version: tag, PactoVersion: "2.0"})
		if _, err := c.Push(t.Context(), mustRef(t, "oci://"+reg.Host+"/platform/cfg:"+tag), img); err != nil {
			t.Fatal(err)
		}
		want[tag] = img
	}

	tagless := mustRef(t, "oci://"+reg.Host+"/platform/cfg")
	got, err := c.Resolve(t.Context(), tagless)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", tagless, err)
	}
	if got != want["1.10.0"].Digest {
		t.Errorf("tagless ref resolved to %s; want 1.10.0's %s (highest release, numeric order)", got, want["1.10.0"].Digest)
	}
	p, err := c.Pull(t.Context(), tagless)
	if err != nil {
		t.Fatalf("Pull(%s): %v", tagless, err)
	}
	if p.Digest != want["1.10.0"].Digest || p.Labels.Version != "1.10.0" {
		t.Errorf("pulled %s (version %q); want 1.10.0", p.Digest, p.Labels.Version)
	}

	// Only non-version tags: nothing to choose, and the error says what to do.
	img := newImage(t, map[string]string{"pacto.yaml": "x"}, oci.Labels{Name: "x", Version: "1.0.0", PactoVersion: "2.0"})
	if _, err := c.Push(t.Context(), mustRef(t, "oci://"+reg.Host+"/platform/unversioned:latest"), img); err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve(t.Context(), mustRef(t, "oci://"+reg.Host+"/platform/unversioned"))
	if !errors.Is(err, oci.ErrNotFound) {
		t.Errorf("tagless ref to a repository without version tags: got %v, want ErrNotFound saying to give a tag", err)
	}
}
