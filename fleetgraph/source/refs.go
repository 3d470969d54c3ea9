package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
)

// RefError codes of the loader's own refusals; a reference that fails to
// load is coded by bundle/failure, in the words of the catalog and
// `kubepact check -o json`.
const (
	CodeOutsideWorkspace = "PATH_OUTSIDE_WORKSPACE"
	CodeRefNotFound      = failure.CodeNotFound
	CodeRegistryDisabled = "REGISTRY_DISABLED"
	CodeRefUnavailable   = failure.CodeUnavailable
)

// ErrTooLarge is wrapped by the *RefError of a LoadWithin whose bundle
// holds more bytes than the call allowed (not more than the loader's own
// limits allow: that is the limit's own error).
var ErrTooLarge = errors.New("the bundle holds more bytes than this load allows")

// RefError is a reference the loader will not or cannot load.
type RefError struct {
	Code    string
	Ref     string
	Message string
	err     error
}

func (e *RefError) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns ErrTooLarge for a bundle over a LoadWithin bound.
func (e *RefError) Unwrap() error { return e.err }

// RefLoaderOptions configure a RefLoader.
type RefLoaderOptions struct {
	// Workspace confines local references: a path that resolves (symlinks
	// included) outside it is refused. Empty refuses every local path.
	Workspace string
	// Client pulls oci:// references; nil refuses them.
	Client *oci.Client
	// CacheSize bounds the bundles kept by digest (default 64).
	CacheSize int
	// CacheBytes bounds the bytes of the bundles kept (default 256 MiB);
	// a bundle larger than that is not kept.
	CacheBytes int64
}

// DefaultRefCacheBytes is RefLoaderOptions.CacheBytes' default.
const DefaultRefCacheBytes = 256 << 20

// RefLoader loads the bundles impact compares: oci:// references through
// the registry client, cached in memory by digest, and local directories
// confined to the workspace.
type RefLoader struct {
	opts  RefLoaderOptions
	mu    sync.Mutex
	cache map[string]*bundle.Bundle // digest -> bundle
	order []string
	bytes int64 // held by the bundles in cache
}

// NewRefLoader returns a RefLoader; nil options refuse every reference.
func NewRefLoader(opts *RefLoaderOptions) *RefLoader {
	l := &RefLoader{cache: map[string]*bundle.Bundle{}}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.CacheSize <= 0 {
		l.opts.CacheSize = 64
	}
	if l.opts.CacheBytes <= 0 {
		l.opts.CacheBytes = DefaultRefCacheBytes
	}
	return l
}

// UsesRegistry reports whether the loader may reach a registry.
func (l *RefLoader) UsesRegistry() bool { return l.opts.Client != nil }

// Load loads the bundle ref names.
func (l *RefLoader) Load(ctx context.Context, ref string) (*bundle.Bundle, error) {
	return l.LoadWithin(ctx, ref, 0)
}

// LoadWithin is Load reading at most maxBytes of bundle files (0: the
// loader's own limits): a pull or a directory holding more stops there,
// with a *RefError wrapping ErrTooLarge. A bundle already kept is
// returned whatever its size; the caller that budgets checks
// b.FS.Size().
func (l *RefLoader) LoadWithin(ctx context.Context, ref string, maxBytes int64) (*bundle.Bundle, error) {
	if bundle.IsOCIRef(ref) {
		return l.loadOCI(ctx, ref, maxBytes)
	}
	if l.opts.Workspace == "" {
		return nil, &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: "local paths are not accepted here: no workspace is configured"}
	}
	lim, clamped := within(archive.DefaultLimits, maxBytes)
	// Checked, then read through handles below the workspace, so a path
	// swapped for a link to outside meanwhile is refused, not followed.
	b, err := bundle.LoadDirIn(l.opts.Workspace, strings.TrimPrefix(ref, oci.LocalScheme), &bundle.LoadOptions{Limits: lim})
	switch {
	case err == nil:
		return b, nil
	case clamped && errors.Is(err, archive.ErrLimit):
		return nil, tooLarge(ref, maxBytes)
	case errors.Is(err, bundle.ErrOutsideRoot):
		return nil, &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: ref + " is outside the workspace"}
	case errors.Is(err, bundle.ErrLinkLoop):
		return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: ref + " cannot be read: its symbolic links loop"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: ref + " does not exist in the workspace"}
	}
	return nil, &RefError{Code: failure.Classify(err).Code(), Ref: ref, Message: fmt.Sprintf("%s is not a loadable bundle directory: %s", ref, firstLine(err.Error()))}
}

// within is own with its byte limits lowered to maxBytes, and whether
// that lowered them.
func within(own archive.Limits, maxBytes int64) (archive.Limits, bool) {
	own = own.WithDefaults()
	if maxBytes <= 0 || maxBytes >= own.MaxTotalBytes {
		return own, false
	}
	own.MaxTotalBytes = maxBytes
	own.MaxFileBytes = min(own.MaxFileBytes, maxBytes)
	return own, true
}

func tooLarge(ref string, maxBytes int64) error {
	return &RefError{Code: CodeRefUnavailable, Ref: ref, err: ErrTooLarge,
		Message: fmt.Sprintf("%s holds more than the %d bytes this call may still read", ref, maxBytes)}
}

func (l *RefLoader) loadOCI(ctx context.Context, ref string, maxBytes int64) (*bundle.Bundle, error) {
	if l.opts.Client == nil {
		return nil, &RefError{Code: CodeRegistryDisabled, Ref: ref, Message: "this server does not reach registries: pass a local bundle directory instead"}
	}
	r, err := oci.ParseReference(ref)
	if err != nil {
		return nil, &RefError{Code: failure.Classify(err).Code(), Ref: ref, Message: firstLine(err.Error())}
	}
	d := r.Digest
	if d == "" {
		dg, err := l.opts.Client.Resolve(ctx, r)
		if err != nil {
			se := fleetgraph.SanitizeError(err)
			return nil, &RefError{Code: se.Code, Ref: ref, Message: ref + ": " + se.Message}
		}
		d = dg.String()
	}
	l.mu.Lock()
	b, ok := l.cache[d]
	l.mu.Unlock()
	if ok {
		return b, nil
	}
	pinned := oci.Scheme + oci.Reference{Registry: r.Registry, Repository: r.Repository, Digest: d}.String()
	client := l.opts.Client
	lim, clamped := within(client.Limits(), maxBytes)
	if clamped {
		client = client.WithLimits(lim)
	}
	b, err = bundle.Load(ctx, pinned, &bundle.LoadOptions{Client: client})
	if err != nil {
		if clamped && errors.Is(err, archive.ErrLimit) {
			return nil, tooLarge(ref, maxBytes)
		}
		se := fleetgraph.SanitizeError(err)
		return nil, &RefError{Code: se.Code, Ref: ref, Message: ref + ": " + se.Message}
	}
	l.keep(d, b)
	return b, nil
}

// keep caches b under digest d, evicting the oldest bundles past the
// count and byte bounds; a bundle larger than the byte bound is not kept.
func (l *RefLoader) keep(d string, b *bundle.Bundle) {
	size := b.FS.Size()
	if size > l.opts.CacheBytes {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cache[d]; ok {
		return
	}
	l.cache[d] = b
	l.order = append(l.order, d)
	l.bytes += size
	for len(l.order) > l.opts.CacheSize || l.bytes > l.opts.CacheBytes {
		l.bytes -= l.cache[l.order[0]].FS.Size()
		delete(l.cache, l.order[0])
		l.order = l.order[1:]
	}
}
