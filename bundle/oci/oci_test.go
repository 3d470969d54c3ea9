package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/testregistry"
)

var ordersFiles = map[string]string{
	"pacto.yaml":              "pactoVersion: \"2.0\"\nservice:\n  name: orders\n  version: 1.2.0\n",
	"interfaces/openapi.yaml": "openapi: 3.1.0\ninfo: {title: orders, version: 1.2.0}\npaths: {}\n",
	"skills/operations.md":    "# Operating orders\n",
}

var ordersLabels = oci.Labels{Name: "orders", Version: "1.2.0", PactoVersion: "2.0"}

func packLayer(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	m := fstest.MapFS{}
	for name, body := range files {
		m[name] = &fstest.MapFile{Data: []byte(body), Mode: 0o644}
	}
	var buf bytes.Buffer
	if err := archive.Pack(&buf, m, nil); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func newImage(tb testing.TB, files map[string]string, labels oci.Labels) *oci.Image {
	tb.Helper()
	img, err := oci.NewImage(packLayer(tb, files), labels)
	if err != nil {
		tb.Fatalf("NewImage() error = %v", err)
	}
	return img
}

// newClient talks plain HTTP to the loopback registry and, unless opts says
// otherwise, reads credentials from an empty .dockerconfigjson so that the
// developer's own Docker config never leaks into a test.
func newClient(tb testing.TB, opts *oci.ClientOptions) *oci.Client {
	tb.Helper()
	if opts == nil {
		opts = &oci.ClientOptions{}
	}
	opts.PlainHTTP = true
	if opts.AllowedRegistries == nil {
		// The test registries listen on loopback, which only a registry
		// named in the allow-list may be at.
		opts.AllowedRegistries = []string{"127.0.0.1"}
	}
	if opts.DockerConfigJSON == nil && opts.DockerConfigPath == "" {
		opts.DockerConfigJSON = []byte(`{"auths":{}}`)
	}
	c, err := oci.NewClient(opts)
	if err != nil {
		tb.Fatalf("NewClient() error = %v", err)
	}
	return c
}

func mustRef(tb testing.TB, s string) oci.Reference {
	tb.Helper()
	ref, err := oci.ParseReference(s)
	if err != nil {
		tb.Fatalf("ParseReference(%q) error = %v", s, err)
	}
	return ref
}

func filesOf(t *testing.T, fsys fs.FS) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		got[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestPushPullRoundTrip(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)
	img := newImage(t, ordersFiles, ordersLabels)

	pushed, err := c.Push(t.Context(), mustRef(t, "oci://"+reg.Host+"/acme/orders:1.2.0"), img)
	if err != nil {
		t.Fatalf("Push() error = %v", err)
	}
	if pushed != img.Digest {
		t.Errorf("Push() = %s; want the image digest %s", pushed, img.Digest)
	}

	for _, ref := range []string{
		"oci://" + reg.Host + "/acme/orders:1.2.0",
		reg.Host + "/acme/orders@" + img.Digest.String(),
		reg.Host + "/acme/orders:1.2.0@" + img.Digest.String(),
	} {
		t.Run(ref, func(t *testing.T) {
			got, err := c.Pull(t.Context(), mustRef(t, ref))
			if err != nil {
				t.Fatalf("Pull() error = %v", err)
			}
			if got.Digest != img.Digest {
				t.Errorf("Pull().Digest = %s; want %s", got.Digest, img.Digest)
			}
			if got.Reference.Digest != img.Digest.String() {
				t.Errorf("Pull().Reference = %s; want it pinned to %s", got.Reference, img.Digest)
			}
			if diff := cmp.Diff(got.Labels, ordersLabels); diff != "" {
				t.Errorf("Pull().Labels (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(filesOf(t, got.FS), ordersFiles); diff != "" {
				t.Errorf("pulled files (-got +want):\n%s", diff)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)

	// The digest computed locally is the bundle's identity whether or not
	// it is pushed: packing again, from another fs.FS, gives the same one,
	// and the registry reports the same one after the push.
	first := newImage(t, ordersFiles, ordersLabels)
	dir := t.TempDir()
	for name, body := range ordersFiles {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var layer bytes.Buffer
	if err := archive.Pack(&layer, os.DirFS(dir), nil); err != nil {
		t.Fatal(err)
	}
	second, err := oci.NewImage(layer.Bytes(), ordersLabels)
	if err != nil {
		t.Fatal(err)
	}
	if second.Digest != first.Digest {
		t.Fatalf("packing the same files twice: digests %s and %s", second.Digest, first.Digest)
	}

	ref := mustRef(t, reg.Host+"/acme/orders:1.2.0")
	if _, err := c.Push(t.Context(), ref, second); err != nil {
		t.Fatal(err)
	}
	resolved, err := c.Resolve(t.Context(), ref)
	if err != nil {
		t.Fatalf("Resolve() error = %v", err)
	}
	if resolved != first.Digest {
		t.Errorf("registry resolves the pushed tag to %s; locally computed identity is %s", resolved, first.Digest)
	}

	// Different content or labels are a different identity.
	changed := map[string]string{}
	for k, v := range ordersFiles {
		changed[k] = v
	}
	changed["skills/operations.md"] += "one more line\n"
	if d := newImage(t, changed, ordersLabels).Digest; d == first.Digest {
		t.Error("changing a file did not change the digest")
	}
	if d := newImage(t, ordersFiles, oci.Labels{Name: "orders", Version: "1.2.1", PactoVersion: "2.0"}).Digest; d == first.Digest {
		t.Error("changing a label did not change the digest")
	}
}

func TestNewImageFormat(t *testing.T) {
	img := newImage(t, ordersFiles, ordersLabels)
	layerDigest := digest.FromBytes(img.Layer)
	configDigest := digest.FromBytes(img.Config)
	wantManifest := fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",`+
		`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},`+
		`"layers":[{"mediaType":"application/vnd.pacto.bundle.layer.v1.tar+gzip","digest":%q,"size":%d}]}`,
		configDigest, len(img.Config), layerDigest, len(img.Layer))
	if diff := cmp.Diff(string(img.Manifest), wantManifest); diff != "" {
		t.Errorf("manifest (-got +want):\n%s", diff)
	}
	const wantConfigPrefix = `{"architecture":"","os":"","config":{"Labels":{"io.pacto.name":"orders","io.pacto.pactoVersion":"2.0","io.pacto.version":"1.2.0"}},"rootfs":{"type":"layers","diff_ids":["sha256:`
	if !strings.HasPrefix(string(img.Config), wantConfigPrefix) {
		t.Errorf("config = %s; want prefix %s", img.Config, wantConfigPrefix)
	}
	if img.Digest != digest.FromBytes(img.Manifest) {
		t.Errorf("Digest = %s; want the manifest's digest", img.Digest)
	}
	if _, err := oci.NewImage([]byte("not gzip"), ordersLabels); err == nil {
		t.Error("NewImage(not gzip): got nil error")
	}
}

func dockerConfigJSON(host, user, password string) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth)
}

func TestCredentials(t *testing.T) {
	reg := testregistry.New(t, &testregistry.Options{Username: "robot", Password: "s3cret"})
	img := newImage(t, ordersFiles, ordersLabels)
	ref := mustRef(t, reg.Host+"/acme/orders:1.2.0")

	good := newClient(t, &oci.ClientOptions{DockerConfigJSON: dockerConfigJSON(reg.Host, "robot", "s3cret")})
	if _, err := good.Push(t.Context(), ref, img); err != nil {
		t.Fatalf("Push() with the right credentials: %v", err)
	}
	if _, err := good.Pull(t.Context(), ref); err != nil {
		t.Fatalf("Pull() with the right credentials: %v", err)
	}

	configFile := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(configFile, dockerConfigJSON(reg.Host, "robot", "s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := newClient(t, &oci.ClientOptions{DockerConfigPath: configFile})
	if _, err := fromFile.Pull(t.Context(), ref); err != nil {
		t.Fatalf("Pull() with credentials from a Docker config file: %v", err)
	}

	for name, config := range map[string][]byte{
		"wrong password": dockerConfigJSON(reg.Host, "robot", "wrong"),
		"no credentials": []byte(`{"auths":{}}`),
	} {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, &oci.ClientOptions{DockerConfigJSON: config})
			_, err := c.Pull(t.Context(), ref)
			if !errors.Is(err, oci.ErrAuthFailed) {
				t.Fatalf("Pull() error = %v; want oci.ErrAuthFailed", err)
			}
			want := "authentication failed for registry " + reg.Host
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Pull() error = %q; want it to contain %q", err, want)
			}
			if _, err := c.Push(t.Context(), ref, img); !errors.Is(err, oci.ErrAuthFailed) {
				t.Errorf("Push() error = %v; want oci.ErrAuthFailed", err)
			}
		})
	}
	if _, err := oci.NewClient(&oci.ClientOptions{DockerConfigJSON: []byte("{not json")}); err == nil {
		t.Error("NewClient() with a malformed .dockerconfigjson: got nil error")
	}
}

func TestNotFound(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)
	if _, err := c.Push(t.Context(), mustRef(t, reg.Host+"/acme/orders:1.2.0"), newImage(t, ordersFiles, ordersLabels)); err != nil {
		t.Fatal(err)
	}
	missing := "sha256:" + strings.Repeat("0", 64)
	for _, s := range []string{
		reg.Host + "/acme/orders:9.9.9",
		reg.Host + "/acme/nothing-here:1.0.0",
		reg.Host + "/acme/orders@" + missing,
	} {
		_, err := c.Pull(t.Context(), mustRef(t, s))
		if !errors.Is(err, oci.ErrNotFound) {
			t.Errorf("Pull(%s) error = %v; want oci.ErrNotFound", s, err)
			continue
		}
		if want := s + " not found"; !strings.Contains(err.Error(), want) {
			t.Errorf("Pull(%s) error = %q; want it to contain %q", s, err, want)
		}
	}
}

func TestCache(t *testing.T) {
	reg := testregistry.New(t, nil)
	cacheDir := t.TempDir()
	c := newClient(t, &oci.ClientOptions{CacheDir: cacheDir})
	img := newImage(t, ordersFiles, ordersLabels)
	tagRef := mustRef(t, reg.Host+"/acme/orders:1.2.0")
	digestRef := tagRef.WithDigest(img.Digest)
	digestRef.Tag = ""
	if _, err := c.Push(t.Context(), tagRef, img); err != nil {
		t.Fatal(err)
	}

	pull := func(ref oci.Reference) {
		t.Helper()
		got, err := c.Pull(t.Context(), ref)
		if err != nil {
			t.Fatalf("Pull(%s) error = %v", ref, err)
		}
		if diff := cmp.Diff(filesOf(t, got.FS), ordersFiles); diff != "" {
			t.Fatalf("pulled files (-got +want):\n%s", diff)
		}
	}

	reg.ResetRequests()
	pull(tagRef)
	if got := reg.BlobFetches(); got != 2 {
		t.Errorf("first pull fetched %d blobs; want 2 (config and layer): %v", got, reg.Requests())
	}

	// A second pull by tag resolves the tag, one request, and nothing else.
	reg.ResetRequests()
	pull(tagRef)
	if got := reg.Requests(); len(got) != 1 || got[0].Method != http.MethodHead || !strings.Contains(got[0].Path, "/manifests/1.2.0") {
		t.Errorf("second pull by tag made requests %v; want only HEAD of the tag's manifest", got)
	}
	// A pull by digest needs the registry not at all.
	reg.ResetRequests()
	pull(digestRef)
	if got := reg.Requests(); len(got) != 0 {
		t.Errorf("pull by cached digest made requests %v; want none", got)
	}

	// A corrupted entry is discarded and fetched again, then served again.
	layerDigest := digest.FromBytes(img.Layer)
	entry := filepath.Join(cacheDir, "blobs", "sha256", layerDigest.Encoded())
	if err := os.WriteFile(entry, []byte("corrupted"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg.ResetRequests()
	pull(digestRef)
	if got := reg.BlobFetches(); got != 1 {
		t.Errorf("pull after corrupting the cached layer fetched %d blobs; want 1: %v", got, reg.Requests())
	}
	if data, err := os.ReadFile(entry); err != nil || !bytes.Equal(data, img.Layer) {
		t.Errorf("cache entry after re-pull: %d bytes, %v; want the layer restored", len(data), err)
	}
	reg.ResetRequests()
	pull(digestRef)
	if got := reg.Requests(); len(got) != 0 {
		t.Errorf("pull after repair made requests %v; want none", got)
	}
	leftovers, _ := filepath.Glob(filepath.Join(cacheDir, "blobs", "sha256", ".*.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left in the cache: %v", leftovers)
	}
}

// pushRaw pushes a manifest built by hand with oras, the way another tool
// could have, and tags it.
func pushRaw(t *testing.T, host, repoName, tag, configMediaType string, config []byte, layers map[string][]byte) {
	t.Helper()
	repo, err := remote.NewRepository(host + "/" + repoName)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	repo.Client = &auth.Client{}
	ctx := t.Context()
	configDesc, err := oras.PushBytes(ctx, repo, configMediaType, config)
	if err != nil {
		t.Fatal(err)
	}
	layerDescs := []ocispec.Descriptor{}
	for mediaType, data := range layers {
		desc, err := oras.PushBytes(ctx, repo, strings.SplitN(mediaType, "#", 2)[0], data)
		if err != nil {
			t.Fatal(err)
		}
		layerDescs = append(layerDescs, desc)
	}
	manifest, err := json.Marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    configDesc,
		Layers:    layerDescs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.TagBytes(ctx, repo, ocispec.MediaTypeImageManifest, manifest, tag); err != nil {
		t.Fatal(err)
	}
}

func TestPullRejectsForeignArtifacts(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)
	img := newImage(t, ordersFiles, ordersLabels)
	other := packLayer(t, map[string]string{"x": "y"})

	tests := []struct {
		name   string
		layers map[string][]byte // media type (suffix "#n" to repeat one) -> content
		want   string
	}{
		{name: "two layers", want: "expected 1 layer, got 2",
			layers: map[string][]byte{oci.LayerMediaType: img.Layer, oci.LayerMediaType + "#2": other}},
		{name: "no layer", want: "expected 1 layer, got 0", layers: map[string][]byte{}},
		{name: "wrong layer media type", want: `layer media type "application/vnd.oci.image.layer.v1.tar+gzip"`,
			layers: map[string][]byte{"application/vnd.oci.image.layer.v1.tar+gzip": img.Layer}},
		{name: "layer that is not a bundle archive", want: "not a gzip stream",
			layers: map[string][]byte{oci.LayerMediaType: []byte("plain text")}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tag := fmt.Sprintf("case%d", i)
			pushRaw(t, reg.Host, "acme/foreign", tag, oci.ConfigMediaType, img.Config, tt.layers)
			_, err := c.Pull(t.Context(), mustRef(t, reg.Host+"/acme/foreign:"+tag))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Pull() error = %v; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestPushRejectsMismatchedDigest(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)
	img := newImage(t, ordersFiles, ordersLabels)
	ref := mustRef(t, reg.Host+"/acme/orders@sha256:"+strings.Repeat("a", 64))
	if _, err := c.Push(t.Context(), ref, img); err == nil || !strings.Contains(err.Error(), "does not match the image digest") {
		t.Errorf("Push() error = %v; want a digest mismatch", err)
	}
	tampered := *img
	tampered.Layer = packLayer(t, map[string]string{"x": "y"})
	if _, err := c.Push(t.Context(), mustRef(t, reg.Host+"/acme/orders:x"), &tampered); !errors.Is(err, oci.ErrInvalidArtifact) {
		t.Errorf("Push() of a layer that does not match the manifest: error = %v; want oci.ErrInvalidArtifact", err)
	}
}

func TestPullByDigestOnly(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)
	img := newImage(t, ordersFiles, ordersLabels)
	ref := mustRef(t, reg.Host+"/acme/orders@"+img.Digest.String())
	if _, err := c.Push(t.Context(), ref, img); err != nil {
		t.Fatalf("Push() by digest error = %v", err)
	}
	got, err := c.Pull(t.Context(), ref)
	if err != nil {
		t.Fatalf("Pull() error = %v", err)
	}
	if got.Digest != img.Digest {
		t.Errorf("Pull().Digest = %s; want %s", got.Digest, img.Digest)
	}
}

func TestPullExtractionLimits(t *testing.T) {
	reg := testregistry.New(t, nil)
	img := newImage(t, map[string]string{"pacto.yaml": strings.Repeat("x", 4096)}, ordersLabels)
	c := newClient(t, &oci.ClientOptions{Limits: archive.Limits{MaxFileBytes: 1024}})
	ref := mustRef(t, reg.Host+"/acme/big:1")
	if _, err := c.Push(t.Context(), ref, img); err != nil {
		t.Fatal(err)
	}
	_, err := c.Pull(t.Context(), ref)
	if !errors.Is(err, archive.ErrLimit) || !strings.Contains(err.Error(), `entry "pacto.yaml"`) {
		t.Errorf("Pull() error = %v; want archive.ErrLimit naming pacto.yaml", err)
	}
}

// TestPullPactoShapedArtifact pulls an artifact shaped like the ones Pacto
// pushes with go-containerregistry: Docker configuration media type, a
// configuration with created and history fields, and a tar whose headers
// come from tar.FileInfoHeader with directory names lacking a slash.
func TestPullPactoShapedArtifact(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, nil)

	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for _, e := range []struct {
		name string
		body string
		dir  bool
	}{{name: "interfaces", dir: true}, {name: "interfaces/openapi.yaml", body: ordersFiles["interfaces/openapi.yaml"]},
		{name: "pacto.yaml", body: ordersFiles["pacto.yaml"]}, {name: "skills", dir: true},
		{name: "skills/operations.md", body: ordersFiles["skills/operations.md"]}} {
		hdr := &tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.body)), ModTime: time.Unix(0, 0)}
		if e.dir {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var layer bytes.Buffer
	zw := gzip.NewWriter(&layer)
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	config := fmt.Appendf(nil, `{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],`+
		`"os":"","rootfs":{"type":"layers","diff_ids":[%q]},"config":{"Labels":{"io.pacto.name":"orders",`+
		`"io.pacto.pactoVersion":"2.0","io.pacto.version":"1.2.0"}}}`, digest.FromBytes(tarBuf.Bytes()))
	pushRaw(t, reg.Host, "acme/orders", "1.2.0", "application/vnd.docker.container.image.v1+json", config,
		map[string][]byte{oci.LayerMediaType: layer.Bytes()})

	got, err := c.Pull(t.Context(), mustRef(t, "oci://"+reg.Host+"/acme/orders:1.2.0"))
	if err != nil {
		t.Fatalf("Pull() error = %v", err)
	}
	if diff := cmp.Diff(got.Labels, ordersLabels); diff != "" {
		t.Errorf("Labels (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(filesOf(t, got.FS), ordersFiles); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
}

func TestConcurrentPullsShareTheCache(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := newClient(t, &oci.ClientOptions{CacheDir: t.TempDir()})
	img := newImage(t, ordersFiles, ordersLabels)
	ref := mustRef(t, reg.Host+"/acme/orders:1.2.0")
	if _, err := c.Push(t.Context(), ref, img); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			_, err := c.Pull(t.Context(), ref)
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Pull() error = %v", err)
		}
	}
}

// TestMalformedCredentialsDoNotLeak: an auth entry that decodes but is not
// "user:password" (a bare token pasted in, say) is a secret; oras quotes it
// whole in its error, and that error must not reach ours, which end up in
// logs and tool results. The entry's registry is still named.
func TestMalformedCredentialsDoNotLeak(t *testing.T) {
	reg := testregistry.New(t, &testregistry.Options{Username: "robot", Password: "s3cret"})
	const secret = "ghp-TOKEN-DO-NOT-PRINT"
	config := fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, reg.Host, base64.StdEncoding.EncodeToString([]byte(secret)))
	ref := mustRef(t, reg.Host+"/acme/orders:1.2.0")

	_, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: config})
	if err == nil {
		t.Fatal("NewClient() with an auth entry that is not user:password: got nil error")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("NewClient() error quotes the credential: %v", err)
	}
	if !strings.Contains(err.Error(), reg.Host) {
		t.Errorf("NewClient() error = %v; want it to name the registry %s", err, reg.Host)
	}

	configFile := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, &oci.ClientOptions{DockerConfigPath: configFile})
	_, err = c.Pull(t.Context(), ref)
	if err == nil {
		t.Fatal("Pull() with a malformed auth entry in the config file: got nil error")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("Pull() error quotes the credential: %v", err)
	}
	if !strings.Contains(err.Error(), configFile) {
		t.Errorf("Pull() error = %v; want it to name the config file %s", err, configFile)
	}
}
