package authoring

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/bundle/validate"
)

// Options configures an [Authoring]. A nil *Options means defaults.
type Options struct {
	// Workspace is the directory all reads and writes are confined to;
	// "" means the current directory.
	Workspace string
	// Resolver resolves refs (policies, config refs) during validation; nil
	// means refs cannot be resolved.
	Resolver validate.Resolver
	// ResolverFor, when set, is asked for the resolver of each bundle
	// directory validated (local refs are relative to it) and takes
	// precedence over Resolver.
	ResolverFor func(bundleDir string) validate.Resolver
	// Dependencies, when set, knows the services a dependency may name
	// (the fleet): bare dependency refs resolve against it and a missing
	// compatibility comes from the known version. Nil leaves refs as given
	// and defaults compatibility to ^1.0.0.
	Dependencies Dependencies
}

// Authoring performs the authoring operations inside one workspace. It is
// safe for concurrent use; concurrent edits of the same file are not
// serialised (the last rename wins, and neither leaves a torn file).
type Authoring struct {
	ws          *Workspace
	resolver    validate.Resolver
	resolverFor func(bundleDir string) validate.Resolver
	deps        Dependencies

	// wrapWriter, when set (tests only), wraps the writer of each temporary
	// file, so a test can fail a write part-way.
	wrapWriter func(rel string, w io.Writer) io.Writer
}

// New returns an Authoring for the workspace in opts.
func New(opts *Options) (*Authoring, error) {
	if opts == nil {
		opts = &Options{}
	}
	ws, err := NewWorkspace(opts.Workspace)
	if err != nil {
		return nil, err
	}
	return &Authoring{ws: ws, resolver: opts.Resolver, resolverFor: opts.ResolverFor, deps: opts.Dependencies}, nil
}

// Workspace returns the workspace this Authoring is confined to.
func (a *Authoring) Workspace() Workspace { return *a.ws }

func (a *Authoring) openRoot() (*os.Root, error) {
	root, err := os.OpenRoot(a.ws.Root)
	if err != nil {
		return nil, internalError("opening the workspace", err)
	}
	return root, nil
}

// validateOptions returns the validation options for the bundle in dir, a
// slash path relative to the workspace root.
func (a *Authoring) validateOptions(dir string) *validate.Options {
	if a.resolverFor != nil {
		return &validate.Options{Resolver: a.resolverFor(filepath.Join(a.ws.Root, filepath.FromSlash(dir)))}
	}
	return &validate.Options{Resolver: a.resolver}
}

// validateResult validates a pacto.yaml as it will be written, against the
// bundle directory overlaid with every file the call would write.
func (a *Authoring) validateResult(ctx context.Context, root *os.Root, dir string, changes []fileChange) validate.Result {
	files := map[string][]byte{}
	var manifest []byte
	for _, c := range changes {
		name := strings.TrimPrefix(c.rel, dir+"/")
		if dir == "." {
			name = c.rel
		}
		files[name] = c.data
		if name == contract.FileName {
			manifest = c.data
		}
	}
	base, err := fs.Sub(root.FS(), dir)
	if err != nil {
		base = root.FS()
	}
	ov := &overlayFS{base: base, files: files}
	r := validate.ValidateBytes(ctx, manifest, ov, a.validateOptions(dir))
	return withLoadability(r, ov)
}

// FindingBundleNotLoadable is the finding code (kubepact's own, beside
// bundle/validate's) for a bundle directory the loader refuses whatever its
// contract says: more entries or bytes than the archive limits, or a link or
// other non-regular file. Such a bundle cannot be checked by `kubepact
// check`, packed or pushed, so authoring never calls it valid or writes one.
const FindingBundleNotLoadable = "BUNDLE_NOT_LOADABLE"

// withLoadability adds to r an error finding when the bundle files in fsys
// (the directory as it is, or as a write would leave it) would be refused by
// the loader, which holds them to the default archive limits.
func withLoadability(r validate.Result, fsys fs.FS) validate.Result {
	err := bundle.CheckFiles(fsys, archive.Limits{})
	if err == nil {
		return r
	}
	f := validate.Finding{Code: FindingBundleNotLoadable, Message: "the bundle cannot be loaded, packed or pushed: " + err.Error()}
	var ae *archive.Error
	if errors.As(err, &ae) {
		f.Path, f.Message = ae.Entry, "the bundle cannot be loaded, packed or pushed: "+ae.Detail
	}
	r.Errors = append(r.Errors, f)
	return r
}

// readIfExists returns a file's content, or nil when it does not exist.
// readManifest reads the pacto.yaml of the bundle in dir (relative to the
// workspace root); a missing one is NOT_FOUND, pointing at pacto_create.
func readManifest(root *os.Root, dir string) (manifest string, data []byte, err error) {
	manifest = join(dir, contract.FileName)
	data, err = readIfExists(root, manifest)
	if err != nil {
		return "", nil, err
	}
	if data == nil {
		return "", nil, &Error{Code: CodeNotFound, Field: "path", Message: fmt.Sprintf(
			"no %s in %s; use pacto_create to start a contract", contract.FileName, displayDir(dir))}
	}
	return manifest, data, nil
}

func readIfExists(root *os.Root, rel string) ([]byte, error) {
	data, err := root.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, internalError("reading "+rel, err)
	}
	return data, nil
}

func exists(root *os.Root, rel string) bool {
	_, err := root.Lstat(rel)
	return err == nil
}

// oneOf checks an enumerated string argument; "" is allowed (absent).
func oneOf(field, value string, accepted ...string) error {
	if value == "" || slices.Contains(accepted, value) {
		return nil
	}
	e := argError(field, fmt.Sprintf("%q must be one of %s, got %q", field, strings.Join(accepted, ", "), value))
	e.Accepted = accepted
	e.DidYouMean = didYouMean(value, accepted)
	return e
}

// checkInterfaces checks interfaces/add_interfaces.
func checkInterfaces(field string, items []InterfaceSpec) ([]InterfaceSpec, error) {
	if err := checkArgumentSize(field, len(items)); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		if it.Name == "" {
			return nil, argError(f+".name", f+".name is required")
		}
		if !safeName.MatchString(it.Name) || strings.Contains(it.Name, "..") {
			return nil, argError(f+".name", fmt.Sprintf(
				"%s.name %q must be letters, digits, '.', '_' or '-' (it becomes the spec file name)", f, it.Name))
		}
		if seen[it.Name] {
			return nil, argError(f+".name", fmt.Sprintf("interface %q is given twice", it.Name))
		}
		seen[it.Name] = true
		if it.Type == "" {
			e := argError(f+".type", f+".type is required (openapi, asyncapi or grpc)")
			e.Accepted = []string{"openapi", "asyncapi", "grpc"}
			return nil, e
		}
		if err := oneOf(f+".type", it.Type, "openapi", "asyncapi", "grpc"); err != nil {
			return nil, err
		}
		if err := oneOf(f+".visibility", it.Visibility, "public", "internal"); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// checkDependencies checks dependencies/add_dependencies and fills in
// derived names and defaults, in a copy: the caller's slice is left as is.
func checkDependencies(field string, given []DependencySpec) ([]DependencySpec, error) {
	items := slices.Clone(given)
	if err := checkArgumentSize(field, len(items)); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i := range items {
		it := &items[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		if strings.TrimSpace(it.Ref) == "" {
			return nil, argError(f+".ref", f+".ref is required (e.g. oci://ghcr.io/acme/payments-pacto:1.2.0)")
		}
		if it.Name == "" {
			it.Name = dependencyName(it.Ref)
			if it.Name == "" {
				return nil, argError(f+".name", fmt.Sprintf("cannot derive a name from ref %q; give %s.name", it.Ref, f))
			}
		}
		if seen[it.Name] {
			return nil, argError(f+".name", fmt.Sprintf("dependency %q is given twice", it.Name))
		}
		seen[it.Name] = true
		// An empty compatibility is filled in by completeDependencies,
		// from the dependency's known version where there is one.
		if it.Required == nil {
			t := true
			it.Required = &t
		}
	}
	return items, nil
}

// dependencyName derives a name from a ref: the last path segment without
// scheme, tag or digest ("oci://ghcr.io/acme/payments-pacto:1.2.0" gives
// "payments-pacto").
func dependencyName(ref string) string {
	if br, err := oci.ParseBundleRef(ref); err == nil && !br.IsLocal() {
		return path.Base(br.OCI.Repository)
	}
	s := ref
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	s, _, _ = strings.Cut(s, "@")
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[:i]
	}
	return s
}

var configTypes = []string{"string", "integer", "number", "boolean", "object", "array"}

// checkConfigProperties checks config_properties/add_config_properties.
func checkConfigProperties(field string, items []ConfigProperty) ([]ConfigProperty, error) {
	if err := checkArgumentSize(field, len(items)); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		if strings.TrimSpace(it.Name) == "" {
			return nil, argError(f+".name", f+".name is required")
		}
		if seen[it.Name] {
			return nil, argError(f+".name", fmt.Sprintf("config property %q is given twice", it.Name))
		}
		seen[it.Name] = true
		if err := oneOf(f+".type", it.Type, configTypes...); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func invalidContract(msg string, r validate.Result) *Error {
	var b strings.Builder
	b.WriteString(msg)
	for i, f := range r.Errors {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(r.Errors)-5)
			break
		}
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %s: %s", sep, f.Code, f.Path, f.Message)
	}
	return &Error{Code: CodeInvalidContract, Message: b.String(), Findings: slices.Clone(r.Errors)}
}

func diffAll(changes []fileChange) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(unifiedDiff(c.rel, c.old, c.data))
	}
	return b.String()
}
