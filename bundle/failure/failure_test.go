package failure_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/testregistry"
)

const contractYAML = "pactoVersion: \"2.0\"\nservice:\n  name: orders\n  version: 1.2.0\n"

// writeBundle writes a bundle directory holding files and returns it.
func writeBundle(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// client talks plain HTTP to the loopback registries named in allowed.
func client(t *testing.T, opts oci.ClientOptions) *oci.Client {
	t.Helper()
	opts.PlainHTTP = true
	if opts.DockerConfigJSON == nil {
		opts.DockerConfigJSON = []byte(`{"auths":{}}`)
	}
	c, err := oci.NewClient(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// push pushes the bundle in dir to ref through c.
func push(t *testing.T, c *oci.Client, ref, dir string) {
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
	if _, err := c.Push(t.Context(), r, img); err != nil {
		t.Fatal(err)
	}
}

// pushForeign pushes an image manifest whose one layer has another media
// type: an artifact that is not a Pacto bundle.
func pushForeign(t *testing.T, host, repoName, tag string) {
	t.Helper()
	repo, err := remote.NewRepository(host + "/" + repoName)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP, repo.Client = true, &auth.Client{}
	ctx := t.Context()
	config, err := oras.PushBytes(ctx, repo, oci.ConfigMediaType, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := oras.PushBytes(ctx, repo, "application/vnd.oci.image.layer.v1.tar+gzip", []byte("not a bundle"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest, Config: config, Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.TagBytes(ctx, repo, ocispec.MediaTypeImageManifest, manifest, tag); err != nil {
		t.Fatal(err)
	}
}

// layerOf is a gzip'd tar of one entry, written as given (a hostile name
// included).
func layerOf(t *testing.T, name, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// status answers every request with the registry error status code.
func status(code int) func(http.Handler) http.Handler {
	return func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = fmt.Fprintf(w, `{"errors":[{"code":"DENIED","message":"registry says %d"}]}`, code)
		})
	}
}

// tamper serves blobs with their last byte changed: content that does not
// match its digest.
func tamper(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[len(body)-1] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// TestClassify classifies real failures: pulls from a real registry on
// loopback (and handlers in front of it that answer as a hostile or
// broken one would), the registry policy, and loads of local bundles.
func TestClassify(t *testing.T) {
	loopback := []string{"127.0.0.1"}
	reg := testregistry.New(t, nil)
	ok := writeBundle(t, map[string]string{"pacto.yaml": contractYAML})
	big := writeBundle(t, map[string]string{"pacto.yaml": contractYAML, "docs/big.md": strings.Repeat("x", 64<<10)})
	c := client(t, oci.ClientOptions{AllowedRegistries: loopback})
	push(t, c, reg.Host+"/acme/orders:1.2.0", ok)
	push(t, c, reg.Host+"/acme/big:1.0.0", big)
	pushForeign(t, reg.Host, "acme/foreign", "1")

	locked := testregistry.New(t, &testregistry.Options{Username: "robot", Password: "s3cret"})
	forbidden := testregistry.New(t, &testregistry.Options{Wrap: status(http.StatusForbidden)})
	broken := testregistry.New(t, &testregistry.Options{Wrap: status(http.StatusBadRequest)}) // a 5xx is retried for seconds first
	tampered := testregistry.New(t, &testregistry.Options{Wrap: tamper})
	push(t, c, tampered.Host+"/acme/orders:1.2.0", writeBundle(t, map[string]string{"pacto.yaml": contractYAML}))
	stall := testregistry.NewStall()
	stalled := testregistry.New(t, &testregistry.Options{Wrap: stall.Wrap})

	pull := func(c *oci.Client, ref string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := bundle.Load(ctx, "oci://"+ref, &bundle.LoadOptions{Client: c})
			return err
		}
	}
	local := func(dir string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := bundle.Load(ctx, dir, &bundle.LoadOptions{Limits: archive.Limits{MaxFileBytes: 32 << 10}})
			return err
		}
	}
	layer := func(data []byte) func(context.Context) error {
		return func(context.Context) error {
			_, err := bundle.LoadLayer(data, nil)
			return err
		}
	}
	notDir := filepath.Join(t.TempDir(), "pacto.yaml")
	if err := os.WriteFile(notDir, []byte(contractYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	escaping := writeBundle(t, map[string]string{"pacto.yaml": contractYAML})
	if err := os.Symlink("/etc/hostname", filepath.Join(escaping, "docs")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		run  func(context.Context) error
		want failure.Kind
	}{
		{"registry 404", pull(c, reg.Host+"/acme/nothing:1.0.0"), failure.NotFound},
		{"registry 401 without credentials", pull(c, locked.Host+"/acme/orders:1.2.0"), failure.AuthFailed},
		{"registry 403", pull(c, forbidden.Host+"/acme/orders:1.2.0"), failure.AuthFailed},
		{"registry 400", pull(c, broken.Host+"/acme/orders:1.2.0"), failure.Unavailable},
		{"wrong layer media type", pull(c, reg.Host+"/acme/foreign:1"), failure.Unreadable},
		{"content that does not match its digest", pull(c, tampered.Host+"/acme/orders:1.2.0"), failure.Unreadable},
		{"layer over the client's limit", pull(client(t, oci.ClientOptions{AllowedRegistries: loopback,
			Limits: archive.Limits{MaxTotalBytes: 1 << 10, MaxFileBytes: 1 << 10, MaxEntries: 4}}), reg.Host+"/acme/big:1.0.0"), failure.TooLarge},
		{"file over the extraction limit", pull(client(t, oci.ClientOptions{AllowedRegistries: loopback,
			Limits: archive.Limits{MaxFileBytes: 1 << 10}}), reg.Host+"/acme/big:1.0.0"), failure.TooLarge},
		{"registry not in the allow-list", pull(client(t, oci.ClientOptions{AllowedRegistries: []string{"ghcr.io"}}), reg.Host+"/acme/orders:1.2.0"), failure.NotAllowed},
		{"loopback address refused", pull(client(t, oci.ClientOptions{AllowedRegistries: []string{oci.AnyRegistry}}), reg.Host+"/acme/orders:1.2.0"), failure.NotAllowed},
		{"nothing listens", pull(c, freeport.ClosedAddr(t)+"/acme/orders:1.2.0"), failure.Unavailable},
		{"registry stalls past the client's timeout", pull(client(t, oci.ClientOptions{AllowedRegistries: loopback, Timeout: 200 * time.Millisecond}),
			stalled.Host+"/acme/orders:1.2.0"), failure.Unavailable},
		{"caller cancels", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				<-stall.Asked()
				cancel()
			}()
			return pull(c, stalled.Host+"/acme/orders:1.2.0")(ctx)
		}, failure.Cancelled},
		{"malformed reference", pull(c, "127.0.0.1/Acme/UPPER:1"), failure.InvalidReference},
		{"no such directory", local(filepath.Join(t.TempDir(), "nope")), failure.NotFound},
		{"a file, not a directory", local(notDir), failure.InvalidReference},
		{"directory without pacto.yaml", local(t.TempDir()), failure.Unreadable},
		{"directory over the file limit", local(big), failure.TooLarge},
		{"link out of the directory", local(escaping), failure.Unsafe},
		{"layer that is not gzip", layer([]byte("plain text")), failure.Unreadable},
		{"layer with an entry leaving the bundle", layer(layerOf(t, "../evil", "x")), failure.Unsafe},
		{"layer without pacto.yaml", layer(layerOf(t, "README.md", "x")), failure.Unreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(t.Context())
			if err == nil {
				t.Fatal("no error")
			}
			if got := failure.Classify(err); got != tt.want {
				t.Errorf("Classify(%v) = %s, want %s", err, got, tt.want)
			}
		})
	}
	if got := failure.Classify(nil); got != failure.Unavailable {
		t.Errorf("Classify(nil) = %s, want UNAVAILABLE", got)
	}
}

// TestEveryKindHasACode: the answer-code table has one distinct code per
// Kind, so a Kind added without one fails here.
func TestEveryKindHasACode(t *testing.T) {
	seen := map[string]failure.Kind{}
	for _, k := range failure.Kinds() {
		code := k.Code()
		if code == "" {
			t.Errorf("Kind %d has no code", int(k))
		}
		if other, dup := seen[code]; dup {
			t.Errorf("Kinds %d and %d share the code %s", int(other), int(k), code)
		}
		seen[code] = k
	}
	if got := failure.Kind(len(failure.Kinds())).Code(); got != failure.CodeUnavailable {
		t.Errorf("a Kind out of range: %q, want UNAVAILABLE", got)
	}
}

func TestClassifyReadsTypesNotText(t *testing.T) {
	// The words of a 404 in an error of another type name no Kind.
	err := errors.New("manifest unknown: not found; unauthorized; denied")
	if got := failure.Classify(err); got != failure.Unavailable {
		t.Errorf("Classify(text only) = %s, want UNAVAILABLE", got)
	}
	if got := failure.Classify(fmt.Errorf("pulling: %w", oci.ErrNotFound)); got != failure.NotFound {
		t.Errorf("Classify(wrapped oci.ErrNotFound) = %s", got)
	}
}
