package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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
	dir, err := l.confine(ref)
	if err != nil {
		return nil, err
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		return nil, &RefError{Code: CodeRefNotFound, Ref: ref, Message: fmt.Sprintf("%s is not a loadable bundle directory: %s", ref, firstLine(err.Error()))}
	}
	return b, nil
}

// confine resolves a local reference inside the workspace.
func (l *RefLoader) confine(ref string) (string, error) {
	if l.opts.Workspace == "" {
		return "", &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: "local paths are not accepted here: no workspace is configured"}
	}
	root, err := filepath.EvalSymlinks(l.opts.Workspace)
	if err != nil {
		return "", &RefError{Code: CodeRefUnavailable, Ref: ref, Message: "the workspace cannot be read"}
	}
	p := strings.TrimPrefix(ref, "file://")
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	// Refuse a path that leaves the workspace before looking at it, so the
	// answer never says whether something outside exists; then again with
	// links followed.
	if !inside(root, filepath.Clean(p)) {
		return "", &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: ref + " is outside the workspace"}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &RefError{Code: CodeRefNotFound, Ref: ref, Message: ref + " does not exist in the workspace"}
		}
		return "", &RefError{Code: CodeRefUnavailable, Ref: ref, Message: ref + " cannot be read"}
	}
	if !inside(root, real) {
		return "", &RefError{Code: CodeOutsideWorkspace, Ref: ref, Message: ref + " is outside the workspace"}
	}
	return real, nil
}

// inside reports whether p is root or below it, lexically.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
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
	pinned := "oci://" + r.Registry + "/" + r.Repository + "@" + d
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
