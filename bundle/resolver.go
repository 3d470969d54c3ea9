package bundle

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
)

// Resolver follows a contract's references to other bundles (configuration
// and policy refs) for bundle/validate. It resolves oci:// references
// through an OCI client and local references (file:// or a bare path)
// against the referring bundle's directory. Results are kept for the
// Resolver's lifetime, so a reference met twice is loaded once.
type Resolver struct {
	opts ResolverOptions

	mu    sync.Mutex
	cache map[string]fs.FS
}

// ResolverOptions configures a Resolver.
type ResolverOptions struct {
	// BaseDir is the directory local references are relative to: the
	// referring bundle's directory. Empty refuses local references, which is
	// right for a bundle pulled from a registry: remote content must not
	// make us read local files.
	BaseDir string
	// Root, when set, confines local references: one that resolves (links
	// followed) outside Root is refused. A server that validates on an
	// agent's behalf sets it to its workspace.
	Root string
	// Client pulls oci:// references. Nil refuses them.
	Client *oci.Client
	// Limits bound each referenced bundle, as in LoadOptions.
	Limits archive.Limits
}

// NewResolver returns a Resolver; nil options refuse every reference.
func NewResolver(opts *ResolverOptions) *Resolver {
	r := &Resolver{cache: map[string]fs.FS{}}
	if opts != nil {
		r.opts = *opts
	}
	return r
}

// ResolverFor returns the Resolver that suits b's references: local ones
// relative to a local bundle's directory, none for a pulled bundle.
func ResolverFor(b *Bundle, c *oci.Client) *Resolver {
	return NewResolver(&ResolverOptions{BaseDir: b.Source.Dir, Client: c})
}

// Resolve returns the files of the bundle ref names.
func (r *Resolver) Resolve(ctx context.Context, ref string) (fs.FS, error) {
	r.mu.Lock()
	if f, ok := r.cache[ref]; ok {
		r.mu.Unlock()
		return f, nil
	}
	r.mu.Unlock()

	b, err := r.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.cache[ref] = b.FS
	r.mu.Unlock()
	return b.FS, nil
}

func (r *Resolver) load(ctx context.Context, ref string) (*Bundle, error) {
	if IsOCIRef(ref) {
		if r.opts.Client == nil {
			return nil, fmt.Errorf("reference %s: no registry access is configured here", ref)
		}
		return Load(ctx, ref, &LoadOptions{Client: r.opts.Client, Limits: r.opts.Limits})
	}
	if r.opts.BaseDir == "" {
		return nil, fmt.Errorf("local reference %q is not followed from a bundle that is not a local directory", ref)
	}
	p := strings.TrimPrefix(ref, "file://")
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.opts.BaseDir, filepath.FromSlash(p))
	}
	if r.opts.Root != "" {
		if err := within(r.opts.Root, p); err != nil {
			return nil, fmt.Errorf("local reference %q: %w", ref, err)
		}
	}
	return LoadDir(p, &LoadOptions{Limits: r.opts.Limits})
}

// within reports an error unless p, with links followed, is root or below it.
func within(root, p string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", p, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("it leads outside %s, which references may not leave", root)
	}
	return nil
}
