package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
)

// RefError codes.
const (
	CodeOutsideWorkspace = "PATH_OUTSIDE_WORKSPACE"
	CodeRefNotFound      = "NOT_FOUND"
	CodeRegistryDisabled = "REGISTRY_DISABLED"
	CodeRefUnavailable   = "UNAVAILABLE"
)

// RefError is a reference the loader will not or cannot load.
type RefError struct {
	Code    string
	Ref     string
	Message string
}

func (e *RefError) Error() string { return e.Code + ": " + e.Message }

// RefLoaderOptions configure a RefLoader.
type RefLoaderOptions struct {
	// Workspace confines local references: a path that resolves (symlinks
	// included) outside it is refused. Empty refuses every local path.
	Workspace string
	// Client pulls oci:// references; nil refuses them.
	Client *oci.Client
	// CacheSize bounds the bundles kept by digest (default 64).
	CacheSize int
}

// RefLoader loads the bundles impact compares: oci:// references through
// the registry client, cached in memory by digest, and local directories
// confined to the workspace.
type RefLoader struct {
	opts  RefLoaderOptions
	mu    sync.Mutex
	cache map[string]*bundle.Bundle // digest -> bundle
	order []string
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
	return l
}

// UsesRegistry reports whether the loader may reach a registry.
func (l *RefLoader) UsesRegistry() bool { return l.opts.Client != nil }

// Load loads the bundle ref names.
func (l *RefLoader) Load(ctx context.Context, ref string) (*bundle.Bundle, error) {
	if bundle.IsOCIRef(ref) {
		return l.loadOCI(ctx, ref)
	}
	if l.opts.Workspace == "" {
		return nil, &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: "local paths are not accepted here: no workspace is configured"}
	}
	// Checked, then read through handles below the workspace, so a path
	// swapped for a link to outside meanwhile is refused, not followed.
	b, err := bundle.LoadDirIn(l.opts.Workspace, strings.TrimPrefix(ref, oci.LocalScheme), nil)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, bundle.ErrOutsideRoot):
		return nil, &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: ref + " is outside the workspace"}
	case errors.Is(err, bundle.ErrLinkLoop):
		return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: ref + " cannot be read: its symbolic links loop"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: ref + " does not exist in the workspace"}
	}
	return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: fmt.Sprintf("%s is not a loadable bundle directory: %s", ref, firstLine(err.Error()))}
}

func (l *RefLoader) loadOCI(ctx context.Context, ref string) (*bundle.Bundle, error) {
	if l.opts.Client == nil {
		return nil, &RefError{Code: CodeRegistryDisabled, Ref: ref, Message: "this server does not reach registries: pass a local bundle directory instead"}
	}
	r, err := oci.ParseReference(ref)
	if err != nil {
		return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: firstLine(err.Error())}
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
	b, err = bundle.Load(ctx, pinned, &bundle.LoadOptions{Client: l.opts.Client})
	if err != nil {
		se := fleetgraph.SanitizeError(err)
		return nil, &RefError{Code: se.Code, Ref: ref, Message: ref + ": " + se.Message}
	}
	l.mu.Lock()
	if _, ok := l.cache[d]; !ok {
		l.cache[d] = b
		l.order = append(l.order, d)
		if len(l.order) > l.opts.CacheSize {
			delete(l.cache, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.mu.Unlock()
	return b, nil
}
