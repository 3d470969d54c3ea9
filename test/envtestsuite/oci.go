package envtestsuite

import (
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
)

// Push pushes a bundle directory to ref (host/repo:tag) and returns its
// digest.
func Push(t testing.TB, c *oci.Client, dir, ref string) digest.Digest {
	t.Helper()
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	r, err := oci.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Push(t.Context(), r, img)
	if err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return d
}

// PlainClient is an OCI client over plain HTTP to loopback registries, with
// dockerConfig as its credentials (none when nil).
func PlainClient(t testing.TB, dockerConfig []byte) *oci.Client {
	t.Helper()
	if dockerConfig == nil {
		dockerConfig = []byte(`{"auths":{}}`)
	}
	c, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: dockerConfig, AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
