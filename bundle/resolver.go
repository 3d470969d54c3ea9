package bundle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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
	// followed) outside Root is refused, and a referenced bundle is read
	// through handles below Root from the check to the last read. A server
	// that validates on an agent's behalf sets it to its workspace.
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
	br, err := oci.ParseBundleRef(ref)
	if err != nil {
		return nil, err
	}
	if !br.IsLocal() {
		if r.opts.Client == nil {
			return nil, fmt.Errorf("reference %s: no registry access is configured here", ref)
		}
		return loadOCI(ctx, ref, br.OCI, &LoadOptions{Client: r.opts.Client, Limits: r.opts.Limits})
	}
	if r.opts.BaseDir == "" {
		return nil, fmt.Errorf("local reference %q is not followed from a bundle that is not a local directory", ref)
	}
	p := br.Local
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.opts.BaseDir, filepath.FromSlash(p))
	}
	if r.opts.Root == "" {
		return LoadDir(p, &LoadOptions{Limits: r.opts.Limits})
	}
	// Checked and read through handles below Root, so a directory or file
	// swapped for a link to outside while it is read is refused.
	b, err := LoadDirIn(r.opts.Root, p, &LoadOptions{Limits: r.opts.Limits})
	if errors.Is(err, ErrOutsideRoot) {
		return nil, fmt.Errorf("local reference %q: it leads outside %s, which references may not leave", ref, r.opts.Root)
	}
	if errors.Is(err, ErrLinkLoop) {
		return nil, fmt.Errorf("local reference %q: its symbolic links loop", ref)
	}
	return b, err
}
