package oci

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/go-logr/logr"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/kubepact/kubepact/bundle/archive"
)

// Caps on metadata read from a registry, before it is parsed.
const (
	maxManifestBytes = 4 << 20
	maxConfigBytes   = 1 << 20
)

// ClientOptions configure a Client. The zero value (or nil) means: HTTPS,
// any registry at a public address, DefaultTimeout per operation,
// credentials from the standard Docker config file, no cache, default
// archive limits.
type ClientOptions struct {
	// PlainHTTP talks HTTP instead of HTTPS to every registry. Only for
	// local or test registries; it is never switched on implicitly.
	PlainHTTP bool
	// DockerConfigPath is a Docker config.json to read credentials from
	// (credential helpers included). Empty means the standard location
	// ($DOCKER_CONFIG/config.json or ~/.docker/config.json), if any.
	DockerConfigPath string
	// DockerConfigJSON is the content of a .dockerconfigjson, what a
	// Kubernetes image pull Secret holds. When set it is the only source of
	// credentials: no file is read.
	DockerConfigJSON []byte
	// CacheDir is where fetched content is kept by digest; empty means no
	// cache.
	CacheDir string
	// Limits bound extraction of pulled layers (zero fields: defaults).
	Limits archive.Limits
	// AllowedRegistries is the allow-list of the registry policy (see
	// policy): host[:port] entries (without a port: any port of the
	// host) and AnyRegistry. Nil means AnyRegistry; an empty, non-nil
	// list allows no registry. Whatever the list, a connection goes to a
	// loopback, link-local, private, metadata or other non-public address
	// only when its host is named in the list itself.
	AllowedRegistries []string
	// Timeout bounds each operation: a Resolve, a Pull (manifest,
	// configuration and layer), a Push. Zero means DefaultTimeout.
	Timeout time.Duration
	// NoRetry sends each request once: a failed one is not retried with
	// backoff (tests, where an unreachable registry must fail at once).
	NoRetry bool
	// Logger receives, for each failed operation, the failure as the
	// libraries reported it: errors returned say what went wrong in
	// kubepact's words only. The zero Logger discards.
	Logger logr.Logger
}

// Client pushes and pulls bundles. It is safe for concurrent use.
type Client struct {
	plainHTTP bool
	client    *auth.Client
	cache     *cache // nil: no cache
	limits    archive.Limits
	policy    *policy
	timeout   time.Duration
	log       logr.Logger
}

// NewClient returns a Client configured by opts (nil means defaults).
func NewClient(opts *ClientOptions) (*Client, error) {
	if opts == nil {
		opts = &ClientOptions{}
	}
	store, err := credentialStore(opts)
	if err != nil {
		return nil, err
	}
	proxy, proxies := environmentProxies()
	p, err := newPolicy(opts.AllowedRegistries, proxies)
	if err != nil {
		return nil, err
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("the registry timeout %s must not be negative (0 means the default, %s)", opts.Timeout, DefaultTimeout)
	}
	transport := sharedTransport(p, proxy, proxies, !opts.NoRetry)
	c := &Client{
		plainHTTP: opts.PlainHTTP,
		client: &auth.Client{
			Client:     &http.Client{Transport: transport, CheckRedirect: checkRedirect},
			Cache:      auth.NewCache(),
			Credential: credentialFunc(store, credentialSource(opts)),
			Header:     http.Header{"User-Agent": {"kubepact"}},
		},
		limits:  opts.Limits.WithDefaults(),
		policy:  p,
		timeout: cmp.Or(opts.Timeout, DefaultTimeout),
		log:     opts.Logger,
	}
	if opts.CacheDir != "" {
		if c.cache, err = newCache(opts.CacheDir); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func credentialStore(opts *ClientOptions) (credentials.Store, error) {
	switch {
	case opts.DockerConfigJSON != nil:
		if err := checkDockerConfigJSON(opts.DockerConfigJSON); err != nil {
			return nil, fmt.Errorf("oci: reading .dockerconfigjson: %w", err)
		}
		store, err := credentials.NewMemoryStoreFromDockerConfig(opts.DockerConfigJSON)
		if err != nil {
			// oras quotes a malformed entry's decoded content: the secret.
			return nil, errors.New("oci: reading .dockerconfigjson: it is not a valid Docker config")
		}
		return store, nil
	case opts.DockerConfigPath != "":
		store, err := credentials.NewStore(opts.DockerConfigPath, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("oci: reading Docker config %s: %w", opts.DockerConfigPath, err)
		}
		return store, nil
	}
	store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
	if err != nil {
		// The standard location is a default, not a request: with no home
		// directory there is simply no file to read.
		return credentials.NewMemoryStore(), nil
	}
	return store, nil
}

// checkDockerConfigJSON checks every auth entry of a .dockerconfigjson
// itself, so that a malformed one is reported by its registry alone: oras
// would quote the decoded entry, which is the credential.
func checkDockerConfigJSON(data []byte) error {
	var cfg struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("not a Docker config (want {\"auths\": {\"REGISTRY\": {\"auth\": \"…\"}}}): %w", err)
	}
	hosts := slices.Sorted(maps.Keys(cfg.Auths))
	for _, host := range hosts {
		a := cfg.Auths[host].Auth
		if a == "" {
			continue
		}
		decoded, err := base64.StdEncoding.DecodeString(a)
		if err != nil || !bytes.Contains(decoded, []byte(":")) {
			return fmt.Errorf("the auth entry for %s is not base64 of username:password", host)
		}
	}
	return nil
}

// credentialFunc reads credentials from store, withholding the details of
// a failure: oras quotes a malformed entry's decoded content, the secret,
// and a credential helper's message may carry it too.
func credentialFunc(store credentials.Store, source string) auth.CredentialFunc {
	get := credentials.Credential(store)
	return func(ctx context.Context, hostport string) (auth.Credential, error) {
		cred, err := get(ctx, hostport)
		if err != nil {
			return auth.EmptyCredential, &credentialError{msg: fmt.Sprintf("%v: the credentials for %s in %s cannot be used "+
				"(a malformed auth entry or a failing credential helper; details withheld, as they may contain the secret)",
				ErrAuthFailed, hostport, source)}
		}
		return cred, nil
	}
}

// credentialSource names where credentials come from, for messages.
func credentialSource(opts *ClientOptions) string {
	switch {
	case opts.DockerConfigJSON != nil:
		return "the .dockerconfigjson"
	case opts.DockerConfigPath != "":
		return opts.DockerConfigPath
	}
	return "the Docker config file"
}

// repository is ref's repository; ref has passed admit.
func (c *Client) repository(ref Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidReference, ref.String(), err)
	}
	repo.Client = c.client
	repo.PlainHTTP = c.plainHTTP
	repo.MaxMetadataBytes = maxManifestBytes
	return repo, nil
}

// admit applies the allow-list to ref's registry, before anything is
// resolved or dialled: a refused registry answers the same whether it
// exists or not.
func (c *Client) admit(ref Reference) error {
	if err := ref.validate(); err != nil {
		return err
	}
	port := "443"
	if c.plainHTTP {
		port = "80"
	}
	if c.policy.admits(ref.Registry, port) {
		return nil
	}
	err := &RegistryError{Problem: ProblemNotAllowed, Ref: ref.String(), Registry: ref.Registry, allowed: c.policy.entries}
	c.log.V(1).Info("Registry not in the allow-list; nothing was sent", "registry", ref.Registry, "ref", ref.String())
	return err
}

// bound gives one operation the client's timeout.
func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// finish completes a failed operation's error: a registry failure gets the
// client's settings for its sentence, and the timeout it ran out of when
// the caller's own context is still live; the failure as reported goes to
// the log, which is the only place it is kept.
func (c *Client) finish(ctx, opCtx context.Context, err error) error {
	re, ok := errors.AsType[*RegistryError](err)
	if !ok {
		return err
	}
	re.timeout, re.plainHTTP, re.anyAllowed = c.timeout, c.plainHTTP, c.policy.any
	switch {
	case ctx.Err() != nil:
		re.Problem = ProblemCancelled
	case opCtx.Err() != nil && (re.Problem == ProblemCancelled || re.Problem == ProblemUnreachable || re.Problem == ProblemTimeout):
		re.Problem = ProblemTimeout
	}
	if re.Err != nil {
		c.log.Info("Registry operation failed", "registry", re.Registry, "ref", re.Ref, "problem", re.Problem, "error", re.Err.Error())
	}
	return err
}

// Resolve returns the manifest digest ref names: its digest if it has one
// (nothing is fetched), else what the registry resolves its tag to.
func (c *Client) Resolve(ctx context.Context, ref Reference) (digest.Digest, error) {
	if err := c.admit(ref); err != nil {
		return "", err
	}
	if ref.Digest != "" {
		return digest.Digest(ref.Digest), nil
	}
	repo, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	octx, cancel := c.bound(ctx)
	defer cancel()
	desc, err := c.resolveTag(octx, repo, ref)
	if err != nil {
		return "", c.finish(ctx, octx, err)
	}
	return desc.Digest, nil
}

func (c *Client) resolveTag(ctx context.Context, repo *remote.Repository, ref Reference) (ocispec.Descriptor, error) {
	if ref.Tag == "" {
		tag, err := c.highestVersionTag(ctx, repo, ref)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		ref.Tag = tag
	}
	desc, err := repo.Resolve(ctx, ref.Tag)
	if err != nil {
		return ocispec.Descriptor{}, classify(ref, err)
	}
	if desc.MediaType != ManifestMediaType {
		return ocispec.Descriptor{}, fmt.Errorf("oci: %s: %w: manifest media type %q, want %q",
			ref, ErrInvalidArtifact, desc.MediaType, ManifestMediaType)
	}
	return desc, nil
}

// Push uploads img to ref's repository, tagging it with ref's tag if there
// is one, and returns its digest. A ref with a digest must name img.Digest.
// img is checked first: its bytes must match its manifest, and an image the
// client's own limits could not pull back is refused. Blobs the registry
// already has are not uploaded again.
func (c *Client) Push(ctx context.Context, ref Reference, img *Image) (digest.Digest, error) {
	if img == nil {
		return "", errors.New("oci: push: nil image")
	}
	if ref.Digest != "" && ref.Digest != img.Digest.String() {
		return "", fmt.Errorf("oci: push %s: reference digest does not match the image digest %s", ref, img.Digest)
	}
	if err := checkManifestDigest(img.Manifest, img.Digest); err != nil {
		return "", fmt.Errorf("oci: push %s: %w", ref, err)
	}
	if err := c.admit(ref); err != nil {
		return "", err
	}
	repo, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	m, err := parseManifest(img.Manifest, c.limits)
	if err != nil {
		return "", fmt.Errorf("oci: push %s: %w", ref, err)
	}
	octx, cancel := c.bound(ctx)
	defer cancel()
	d, err := c.push(octx, repo, ref, img, m)
	if err != nil {
		return "", c.finish(ctx, octx, err)
	}
	return d, nil
}

// push uploads the blobs the registry does not have, then the manifest.
func (c *Client) push(ctx context.Context, repo *remote.Repository, ref Reference, img *Image, m *ocispec.Manifest) (digest.Digest, error) {
	for _, blob := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{m.Config, img.Config}, {m.Layers[0], img.Layer}} {
		if err := checkBlob(blob.data, blob.desc); err != nil {
			return "", fmt.Errorf("oci: push %s: %w", ref, err)
		}
		exists, err := repo.Exists(ctx, blob.desc)
		if err != nil {
			return "", classify(ref, err)
		}
		if exists {
			continue
		}
		if err := repo.Push(ctx, blob.desc, bytes.NewReader(blob.data)); err != nil {
			return "", classify(ref, err)
		}
	}
	mdesc := ocispec.Descriptor{MediaType: ManifestMediaType, Digest: img.Digest, Size: int64(len(img.Manifest))}
	var err error
	if ref.Tag != "" {
		err = repo.PushReference(ctx, mdesc, bytes.NewReader(img.Manifest), ref.Tag)
	} else {
		err = repo.Push(ctx, mdesc, bytes.NewReader(img.Manifest))
	}
	if err != nil {
		return "", classify(ref, err)
	}
	return img.Digest, nil
}

// Pulled is a bundle fetched from a registry.
type Pulled struct {
	// Reference is the reference as requested, pinned to Digest.
	Reference Reference
	// Digest is the manifest digest: the bundle's identity.
	Digest digest.Digest
	// FS holds the extracted bundle files.
	FS *archive.FS
	// Labels are read from the image configuration.
	Labels Labels
}

// Pull fetches and extracts the bundle ref names. A tag is resolved to a
// digest first (one request); everything else is fetched by digest,
// verified, and served from the cache when the client has one.
func (c *Client) Pull(ctx context.Context, ref Reference) (*Pulled, error) {
	if err := c.admit(ref); err != nil {
		return nil, err
	}
	repo, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	octx, cancel := c.bound(ctx)
	defer cancel()
	p, err := c.pull(octx, repo, ref)
	if err != nil {
		return nil, c.finish(ctx, octx, err)
	}
	return p, nil
}

func (c *Client) pull(ctx context.Context, repo *remote.Repository, ref Reference) (*Pulled, error) {
	var err error
	var mdesc ocispec.Descriptor
	if ref.Digest != "" {
		mdesc = ocispec.Descriptor{MediaType: ManifestMediaType, Digest: digest.Digest(ref.Digest), Size: -1}
	} else if mdesc, err = c.resolveTag(ctx, repo, ref); err != nil {
		return nil, err
	}
	ref = ref.WithDigest(mdesc.Digest)

	raw, err := c.fetch(ctx, repo, ref, mdesc, maxManifestBytes, true)
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(raw, c.limits)
	if err != nil {
		return nil, fmt.Errorf("oci: %s: %w", ref, err)
	}
	config, err := c.fetch(ctx, repo, ref, m.Config, maxConfigBytes, false)
	if err != nil {
		return nil, err
	}
	labels, err := parseLabels(config)
	if err != nil {
		return nil, fmt.Errorf("oci: %s: %w", ref, err)
	}
	layer, err := c.fetch(ctx, repo, ref, m.Layers[0], c.limits.StreamBytes(), false)
	if err != nil {
		return nil, err
	}
	fsys, err := archive.Extract(bytes.NewReader(layer), c.limits)
	if err != nil {
		return nil, fmt.Errorf("oci: %s: layer %s: %w", ref, m.Layers[0].Digest, err)
	}
	return &Pulled{Reference: ref, Digest: mdesc.Digest, FS: fsys, Labels: labels}, nil
}

// fetch returns the verified content desc names, from the cache if it is
// there, else from the registry (then caching it). A desc.Size of -1 means
// unknown (a manifest pinned by digest). At most max bytes are read.
func (c *Client) fetch(ctx context.Context, repo *remote.Repository, ref Reference, desc ocispec.Descriptor, max int64, isManifest bool) ([]byte, error) {
	if desc.Size > max {
		return nil, fmt.Errorf("oci: %s: %w: %s is %d bytes, over the %d-byte limit", ref, errOverLimit, desc.Digest, desc.Size, max)
	}
	if c.cache != nil {
		if data, ok := c.cache.get(desc.Digest, max); ok {
			return data, nil
		}
	}
	var rc io.ReadCloser
	var err error
	switch {
	case isManifest && desc.Size < 0:
		var got ocispec.Descriptor
		got, rc, err = repo.Manifests().FetchReference(ctx, desc.Digest.String())
		if err == nil && got.MediaType != ManifestMediaType {
			_ = rc.Close()
			return nil, fmt.Errorf("oci: %s: %w: manifest media type %q, want %q", ref, ErrInvalidArtifact, got.MediaType, ManifestMediaType)
		}
	case isManifest:
		rc, err = repo.Manifests().Fetch(ctx, desc)
	default:
		rc, err = repo.Blobs().Fetch(ctx, desc)
	}
	if err != nil {
		return nil, classify(ref, err)
	}
	defer func() { _ = rc.Close() }()
	data, err := readCapped(rc, desc.Size, max)
	if err != nil {
		return nil, classify(ref, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("oci: %s: %w: %s is over the %d-byte limit", ref, errOverLimit, desc.Digest, max)
	}
	if desc.Size >= 0 {
		if err := checkBlob(data, desc); err != nil {
			return nil, fmt.Errorf("oci: %s: %w", ref, err)
		}
	} else if err := checkManifestDigest(data, desc.Digest); err != nil {
		return nil, fmt.Errorf("oci: %s: %w", ref, err)
	}
	if c.cache != nil {
		if err := c.cache.put(desc.Digest, data); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// readCapped reads r to the end, or to max+1 bytes. With a known size
// (>= 0, already checked against max) it reads into one exact allocation.
func readCapped(r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(io.LimitReader(r, max+1))
	}
	var buf bytes.Buffer
	buf.Grow(int(size) + bytes.MinRead)
	_, err := buf.ReadFrom(io.LimitReader(r, max+1))
	return buf.Bytes(), err
}

func checkManifestDigest(data []byte, want digest.Digest) error {
	if err := want.Validate(); err != nil {
		return fmt.Errorf("%w: digest %q: %w", ErrInvalidArtifact, want, err)
	}
	if got := want.Algorithm().FromBytes(data); got != want {
		return fmt.Errorf("%w: content has digest %s, want %s", ErrInvalidArtifact, got, want)
	}
	return nil
}

func checkBlob(data []byte, desc ocispec.Descriptor) error {
	if int64(len(data)) != desc.Size {
		return fmt.Errorf("%w: %s has %d bytes, descriptor says %d", ErrInvalidArtifact, desc.Digest, len(data), desc.Size)
	}
	return checkManifestDigest(data, desc.Digest)
}

// parseManifest checks that raw is a Pacto bundle manifest: an OCI image
// manifest with one layer of LayerMediaType and sizes within the limits.
func parseManifest(raw []byte, lim archive.Limits) (*ocispec.Manifest, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %w", ErrInvalidArtifact, err)
	}
	switch {
	case m.SchemaVersion != 2:
		return nil, fmt.Errorf("%w: manifest schemaVersion %d, want 2", ErrInvalidArtifact, m.SchemaVersion)
	case m.MediaType != "" && m.MediaType != ManifestMediaType:
		return nil, fmt.Errorf("%w: manifest media type %q, want %q", ErrInvalidArtifact, m.MediaType, ManifestMediaType)
	case len(m.Layers) != 1:
		return nil, fmt.Errorf("%w: expected 1 layer, got %d", ErrInvalidArtifact, len(m.Layers))
	case m.Layers[0].MediaType != LayerMediaType:
		return nil, fmt.Errorf("%w: layer media type %q, want %q", ErrInvalidArtifact, m.Layers[0].MediaType, LayerMediaType)
	case !slices.Contains([]string{ConfigMediaType, dockerConfigMediaType}, m.Config.MediaType):
		return nil, fmt.Errorf("%w: config media type %q, want %q", ErrInvalidArtifact, m.Config.MediaType, ConfigMediaType)
	case m.Config.Size < 0 || m.Layers[0].Size < 0:
		return nil, fmt.Errorf("%w: a negative size (config %d, layer %d bytes)", ErrInvalidArtifact, m.Config.Size, m.Layers[0].Size)
	case m.Config.Size > maxConfigBytes:
		return nil, fmt.Errorf("%w: config is %d bytes, limit %d", errOverLimit, m.Config.Size, maxConfigBytes)
	case m.Layers[0].Size > lim.StreamBytes():
		return nil, fmt.Errorf("%w: layer is %d bytes, limit %d", errOverLimit, m.Layers[0].Size, lim.StreamBytes())
	}
	for _, d := range []digest.Digest{m.Config.Digest, m.Layers[0].Digest} {
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("%w: digest %q: %w", ErrInvalidArtifact, d, err)
		}
	}
	return &m, nil
}

func parseLabels(config []byte) (Labels, error) {
	var cfg struct {
		Config struct {
			Labels map[string]string `json:"Labels"`
		} `json:"config"`
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		return Labels{}, fmt.Errorf("%w: image configuration: %w", ErrInvalidArtifact, err)
	}
	l := cfg.Config.Labels
	return Labels{Name: l[LabelName], Version: l[LabelVersion], PactoVersion: l[LabelPactoVersion]}, nil
}

// maxTags bounds how many tags a tagless reference makes us read.
const maxTags = 10000

// highestVersionTag picks, for a reference with neither tag nor digest, the
// highest semantic-version tag of the repository, as Pacto resolves such
// references. Tags that are not versions ("latest", "main") are passed over;
// so are prereleases when a release exists.
func (c *Client) highestVersionTag(ctx context.Context, repo *remote.Repository, ref Reference) (string, error) {
	var best *semver.Version
	var bestTag string
	n := 0
	tooMany := fmt.Errorf("oci: %s: more than %d tags; give a tag or a digest", ref, maxTags)
	err := repo.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			if n++; n > maxTags {
				return tooMany
			}
			v, err := semver.NewVersion(t)
			if err != nil {
				continue
			}
			if best == nil || better(v, best) {
				best, bestTag = v, t
			}
		}
		return nil
	})
	if errors.Is(err, tooMany) {
		return "", tooMany
	}
	if err != nil {
		return "", classify(ref, err)
	}
	if best == nil {
		return "", fmt.Errorf("oci: %s names no tag and the repository has no version tag to choose: give a tag or a digest: %w", ref, ErrNotFound)
	}
	return bestTag, nil
}

// better orders releases above prereleases, then by version.
func better(v, than *semver.Version) bool {
	if (v.Prerelease() == "") != (than.Prerelease() == "") {
		return v.Prerelease() == ""
	}
	return v.GreaterThan(than)
}
