package oci_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/testregistry"
)

// specFiles is a bundle holding a deterministic OpenAPI-like JSON document
// of about 5 MiB (varied words, so it compresses like a real spec).
func specFiles() map[string]string {
	words := strings.Fields("order customer invoice shipment payment refund status pending active " +
		"returns the identifier of a resource when request is valid otherwise an error with code and message")
	rng := rand.New(rand.NewPCG(1, 2))
	sentence := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(parts, " ")
	}
	var b bytes.Buffer
	b.WriteString(`{"openapi":"3.1.0","paths":{`)
	for i := 0; b.Len() < 5<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/v1/r%d/{id}":{"get":{"operationId":"get%d","summary":%q,"description":%q}}`, i, i, sentence(6), sentence(40))
	}
	b.WriteString(`}}`)
	return map[string]string{
		"pacto.yaml":              "pactoVersion: \"2.0\"\nservice:\n  name: orders\n  version: 1.0.0\n",
		"interfaces/openapi.json": b.String(),
	}
}

func BenchmarkNewImage5MiBSpec(b *testing.B) {
	layer := packLayer(b, specFiles())
	b.SetBytes(int64(len(layer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := oci.NewImage(layer, ordersLabels); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPullLoopback pulls a 5 MiB-spec bundle by tag from the in-process
// registry with the cache disabled: resolve, manifest, config and layer
// requests, digest checks and extraction.
func BenchmarkPullLoopback(b *testing.B) {
	reg := testregistry.New(b, nil)
	c := newClient(b, nil)
	files := specFiles()
	img := newImage(b, files, ordersLabels)
	ref := mustRef(b, reg.Host+"/acme/orders:1.0.0")
	if _, err := c.Push(b.Context(), ref, img); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(files["interfaces/openapi.json"]) + len(files["pacto.yaml"])))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Pull(b.Context(), ref); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(img.Layer)), "layer-bytes")
}

// BenchmarkResolveLoopback resolves a tag (one HEAD request on a kept-alive
// connection) through the Client — allow-list, guarded transport, timeout,
// error classification — and, side by side, through a bare oras repository
// on oras' default retrying client, which is what the Client used before
// the registry policy.
func BenchmarkResolveLoopback(b *testing.B) {
	reg := testregistry.New(b, nil)
	c := newClient(b, nil)
	ref := mustRef(b, reg.Host+"/acme/orders:1.0.0")
	if _, err := c.Push(b.Context(), ref, newImage(b, ordersFiles, ordersLabels)); err != nil {
		b.Fatal(err)
	}
	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Resolve(b.Context(), ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("oras-default", func(b *testing.B) {
		repo, err := remote.NewRepository(reg.Host + "/acme/orders")
		if err != nil {
			b.Fatal(err)
		}
		repo.PlainHTTP = true
		repo.Client = &auth.Client{Client: retry.DefaultClient, Cache: auth.NewCache(), Credential: auth.StaticCredential(reg.Host, auth.EmptyCredential)}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := repo.Resolve(b.Context(), "1.0.0"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
