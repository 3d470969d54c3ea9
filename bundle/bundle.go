package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/opencontainers/go-digest"

	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
)

// Bundle is a loaded Pacto bundle. It is never mutated after Load returns.
type Bundle struct {
	// Contract is the parsed pacto.yaml. It is nil when the contract did not
	// parse; ParseErr says why, and Raw still holds the bytes, so that a
	// checker can report on a broken bundle instead of refusing to load it.
	Contract *contract.Contract
	ParseErr error
	// Raw is pacto.yaml as written.
	Raw []byte
	// FS holds exactly the bundle's packaged files: for a directory, the
	// files left after .pactoignore, read through the same extractor and
	// limits a pulled bundle goes through.
	FS *archive.FS
	// Identity is the OCI manifest digest of the bundle: the digest a
	// registry reports for it once pushed (or reported, for a pulled one).
	Identity digest.Digest
	// Content is the digest of a local bundle's packed, uncompressed tar
	// (its layer's diff ID): a fingerprint of exactly the files packed,
	// their names, modes and bytes, computed before anything is parsed or
	// compressed. Empty for a pulled bundle.
	Content digest.Digest
	// Source says where the bundle came from.
	Source Source

	image *oci.Image
	doc   *contract.Document
}

// Source is where a bundle was loaded from.
type Source struct {
	// Dir is the absolute directory of a local bundle; empty for OCI.
	Dir string
	// Ref is the oci:// reference as requested; empty for a directory.
	Ref string
}

// String names the source for messages: the directory or the reference.
func (s Source) String() string {
	if s.Dir != "" {
		return s.Dir
	}
	return s.Ref
}

// LoadOptions configures Load. The zero value loads directories with the
// default archive limits and OCI references with a default client.
type LoadOptions struct {
	// Client pulls oci:// references. Nil creates one with default options
	// (Docker config credentials, HTTPS only, no cache) on first use.
	Client *oci.Client
	// Limits bound a bundle's files, local or pulled. Zero fields take the
	// archive defaults (10 MiB a file, 50 MiB in all, 10,000 entries).
	Limits archive.Limits
	// KnownIdentity, when set, is asked for the identity of a local
	// bundle by its Content digest before the layer is compressed: a
	// non-empty answer is taken as the bundle's Identity, and the layer
	// is neither compressed nor its image built (Image then says so). The
	// answer must be one an earlier load of the same content by the same
	// build computed: the identity follows from the tar and the contract
	// it holds, so a cache keyed by Content may answer it.
	KnownIdentity func(content digest.Digest) digest.Digest
}

// OCIScheme prefixes references that name a bundle in an OCI registry.
const OCIScheme = oci.Scheme

// IsOCIRef reports whether ref names a registry bundle rather than a directory.
func IsOCIRef(ref string) bool { return oci.IsReference(ref) }

// Load loads the bundle a reference names: an oci:// reference, a file://
// URL or a directory path, as [oci.ParseBundleRef] reads it.
func Load(ctx context.Context, ref string, opts *LoadOptions) (*Bundle, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	r, err := oci.ParseBundleRef(ref)
	if err != nil {
		return nil, err
	}
	if r.IsLocal() {
		return LoadDir(r.Local, opts)
	}
	return loadOCI(ctx, ref, r.OCI, opts)
}

// LoadDir loads the bundle in a directory. The directory's files go through
// .pactoignore, the reproducible packer and the hostile-archive extractor,
// so a local bundle is byte for byte what it would be once pushed, and is
// held to the same limits. Every read goes through an [os.Root] opened at
// the directory: a file swapped for a link while the bundle is read cannot
// make it read outside.
func LoadDir(dir string, opts *LoadOptions) (*Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle directory %q: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notExistError("bundle directory " + abs + " does not exist")
		}
		return nil, fmt.Errorf("bundle directory %s: %w", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: %w", abs, ErrNotDirectory)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("bundle directory %s: %w", abs, err)
	}
	defer r.Close()
	return loadRoot(r, abs, opts)
}

// LoadDirIn loads the bundle in directory p (absolute, or relative to root)
// without ever reading outside root: p is checked with [Confine] for a
// precise error, then opened and read through handles below root
// ([OpenDirIn]), so a directory or file swapped for a link to outside root
// between the check and the reads is refused, not followed. A confinement
// error wraps [ErrOutsideRoot] or [ErrLinkLoop].
func LoadDirIn(root, p string, opts *LoadOptions) (*Bundle, error) {
	rel, err := Confine(root, p)
	if err != nil {
		return nil, fmt.Errorf("bundle directory %s: %w", p, err)
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	r, err := OpenDirIn(root, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notExistError("bundle directory " + abs + " does not exist")
		}
		return nil, fmt.Errorf("bundle directory %s: %w", abs, RootError(err))
	}
	defer r.Close()
	return loadRoot(r, abs, opts)
}

// Errors of loading, for errors.Is; each message is a sentence of ours.
var (
	// ErrNotDirectory: a local reference names a file, not a bundle
	// directory.
	ErrNotDirectory = errors.New("a local bundle is a directory holding " + contract.FileName)
	// ErrNoContract: the directory, archive or artifact holds no
	// pacto.yaml, so it is not a bundle.
	ErrNoContract = errors.New("not a bundle: it holds no " + contract.FileName)
)

// contractMissing is ErrNoContract said as the loader has always said it.
type contractMissing string

func (e contractMissing) Error() string        { return string(e) }
func (e contractMissing) Is(target error) bool { return target == ErrNoContract }

var (
	errMustHoldContract error = contractMissing("a bundle directory must hold one")
	errNoContract       error = contractMissing("bundle has no " + contract.FileName)
)

// notExistError is a message that reports as fs.ErrNotExist.
type notExistError string

func (e notExistError) Error() string        { return string(e) }
func (e notExistError) Is(target error) bool { return target == fs.ErrNotExist }

// loadRoot loads the bundle whose directory r is; abs names it in messages
// and in the bundle's Source.
func loadRoot(r *os.Root, abs string, opts *LoadOptions) (*Bundle, error) {
	return loadFS(rootFS{r}, abs, opts)
}

// loadFS loads the bundle whose files dirFS holds.
func loadFS(dirFS fs.FS, abs string, opts *LoadOptions) (*Bundle, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	if _, err := fs.Stat(dirFS, contract.FileName); err != nil {
		return nil, fmt.Errorf("%s has no %s: %w", abs, contract.FileName, errMustHoldContract)
	}
	files, err := Files(dirFS)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	if err := checkLimits(dirFS, files, opts.Limits); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	// The tar is packed once and read back as it is, under the
	// extractor's limits and rules: the layer, its digest and the
	// manifest's are those of the gzip'd tar Pack writes, without
	// decompressing it twice (for the files, then for the diff ID).
	var tarball bytes.Buffer
	if err := archive.PackTar(&tarball, dirFS, files); err != nil {
		return nil, fmt.Errorf("packing bundle %s: %w", abs, err)
	}
	content := digest.FromBytes(tarball.Bytes())
	afs, err := archive.ExtractTar(bytes.NewReader(tarball.Bytes()), opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	b, err := fromFS(afs)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	b.Content = content
	b.Source = Source{Dir: abs}
	if opts.KnownIdentity != nil {
		if id := opts.KnownIdentity(content); id != "" {
			b.Identity = id
			return b, nil
		}
	}
	var layer bytes.Buffer
	if err := archive.Compress(&layer, tarball.Bytes()); err != nil {
		return nil, fmt.Errorf("packing bundle %s: %w", abs, err)
	}
	if b.image, err = oci.NewImageOf(layer.Bytes(), content, b.labels()); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	b.Identity = b.image.Digest
	return b, nil
}

// CheckFiles holds the files of a bundle directory (as fsys presents them:
// it may be the directory as a write is about to leave it) to the limits and
// rules LoadDir applies, without packing anything: the files the loader
// would take, each a regular file, within the size limits, and no more
// entries (files and the directories holding them) than the entry limit. A
// bundle that passes loads, as far as its files go.
func CheckFiles(fsys fs.FS, lim archive.Limits) error {
	files, err := Files(fsys)
	if err != nil {
		return err
	}
	return checkLimits(fsys, files, lim)
}

// checkLimits holds a directory's files to the limits before any is read:
// Pack reads every byte it is given into memory, so a huge file would
// otherwise be compressed in full only for Extract to refuse it. Entries are
// counted as Pack writes them and Extract counts them: each file and each
// directory holding one.
func checkLimits(fsys fs.FS, files []string, lim archive.Limits) error {
	lim = lim.WithDefaults()
	dirs := map[string]bool{}
	for _, p := range files {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	if n := len(files) + len(dirs); n > lim.MaxEntries {
		return &archive.Error{Kind: archive.ErrLimit, Limit: archive.LimitEntries,
			Detail: fmt.Sprintf("%d entries (%d files and the %d directories holding them): more than %d entries, the limit of entries a bundle may hold", n, len(files), len(dirs), lim.MaxEntries)}
	}
	var total int64
	for _, p := range files {
		st, err := fs.Lstat(fsys, p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		size := st.Size()
		if size > lim.MaxFileBytes {
			return &archive.Error{Entry: p, Kind: archive.ErrLimit, Limit: archive.LimitFile,
				Detail: fmt.Sprintf("size %d bytes exceeds the per-file limit of %d bytes", size, lim.MaxFileBytes)}
		}
		if total += size; total > lim.MaxTotalBytes {
			return &archive.Error{Entry: p, Kind: archive.ErrLimit, Limit: archive.LimitTotal,
				Detail: fmt.Sprintf("contents of at least %d bytes exceed the total limit of %d bytes", total, lim.MaxTotalBytes)}
		}
	}
	return nil
}

// LoadLayer loads a bundle from its packed layer, the gzip'd tar that
// `kubepact pack` writes and that is the bundle's OCI layer (a bundle kept in
// a ConfigMap, for instance). The layer is extracted under opts' limits and the
// identity is the manifest digest the bundle has once pushed.
func LoadLayer(layer []byte, opts *LoadOptions) (*Bundle, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	return fromLayer(layer, opts.Limits)
}

// ErrLayerFileTooLarge is a packed bundle file larger than the total a
// bundle may hold (Limits.MaxTotalBytes), refused before it is read.
var ErrLayerFileTooLarge = errors.New("the file is larger than a bundle may hold in all")

// LoadLayerFile loads a packed bundle file (a bundle.tar.gz as "kubepact
// pack" writes it, e.g. mounted from a ConfigMap) as LoadLayer does,
// reading at most Limits.MaxTotalBytes of it: a larger file is
// ErrLayerFileTooLarge, and open and read failures are the *fs.PathError
// os returns. A packed file is fixed content, as a pulled bundle is: the
// bundle's Source is the path, so skills are read from the bundle, not
// from a directory.
func LoadLayerFile(path string, opts *LoadOptions) (*Bundle, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bound := opts.Limits.WithDefaults().MaxTotalBytes
	raw, err := io.ReadAll(io.LimitReader(f, bound+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > bound {
		return nil, fmt.Errorf("%w (%d bytes)", ErrLayerFileTooLarge, bound)
	}
	b, err := fromLayer(raw, opts.Limits)
	if err != nil {
		return nil, err
	}
	b.Source = Source{Ref: path}
	return b, nil
}

// fromLayer builds a Bundle from a packed layer: it extracts it under the
// limits, parses the contract and computes the identity.
func fromLayer(layer []byte, lim archive.Limits) (*Bundle, error) {
	afs, err := archive.Extract(bytes.NewReader(layer), lim)
	if err != nil {
		return nil, err
	}
	b, err := fromFS(afs)
	if err != nil {
		return nil, err
	}
	img, err := oci.NewImage(layer, b.labels())
	if err != nil {
		return nil, err
	}
	b.image = img
	b.Identity = img.Digest
	return b, nil
}

func fromFS(afs *archive.FS) (*Bundle, error) {
	raw, err := afs.ReadFile(contract.FileName)
	if err != nil {
		return nil, errNoContract
	}
	b := &Bundle{Raw: raw, FS: afs}
	b.doc = contract.ParseDocument(raw)
	b.Contract, b.ParseErr = b.doc.Contract, b.doc.Err
	return b, nil
}

// Document is the decode of Raw that Contract came from, with its generic
// tree: a validator handed it (validate.Options.Document) does not decode
// pacto.yaml again. It is shared with the bundle: read it, never modify
// it.
func (b *Bundle) Document() *contract.Document { return b.doc }

func loadOCI(ctx context.Context, ref string, r oci.Reference, opts *LoadOptions) (*Bundle, error) {
	c := opts.Client
	if c == nil {
		var err error
		c, err = oci.NewClient(&oci.ClientOptions{Limits: opts.Limits})
		if err != nil {
			return nil, err
		}
	}
	p, err := c.Pull(ctx, r)
	if err != nil {
		return nil, err
	}
	b, err := fromFS(p.FS)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", ref, err)
	}
	b.Identity = p.Digest
	b.Source = Source{Ref: ref}
	return b, nil
}

// labels are the config labels Pacto writes: the service name and version
// and the contract format version. A contract that did not parse has none.
func (b *Bundle) labels() oci.Labels {
	if b.Contract == nil {
		return oci.Labels{}
	}
	return oci.Labels{
		Name:         b.Contract.Service.Name,
		Version:      b.Contract.Service.Version,
		PactoVersion: b.Contract.PactoVersion,
	}
}

// Image returns the OCI image of a local bundle, ready to push: the packed
// layer, the config with Pacto's labels, and the manifest whose digest is
// the bundle's Identity. A pulled bundle has none (it is already pushed).
func (b *Bundle) Image() (*oci.Image, error) {
	if b.image == nil && b.Source.Dir != "" {
		return nil, fmt.Errorf("bundle %s was loaded with a known identity, without packing its layer: load it again without LoadOptions.KnownIdentity to push it", b.Source)
	}
	if b.image == nil {
		return nil, fmt.Errorf("bundle %s was pulled from a registry: it has no local image to push", b.Source)
	}
	return b.image, nil
}
