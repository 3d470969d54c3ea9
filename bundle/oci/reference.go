package oci

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Scheme is the optional prefix of a reference as Pacto writes it.
const Scheme = "oci://"

// ErrInvalidReference is wrapped by every ParseReference error.
var ErrInvalidReference = errors.New("invalid OCI reference")

// ReferenceError is a reference ParseReference refuses: Reason says what is
// wrong and what is accepted, for a caller that names the reference itself.
type ReferenceError struct {
	Ref    string
	Reason string
}

func (e *ReferenceError) Error() string {
	return fmt.Sprintf("%v %q: %s", ErrInvalidReference, e.Ref, e.Reason)
}

// Is makes every ReferenceError match [ErrInvalidReference].
func (e *ReferenceError) Is(target error) bool { return target == ErrInvalidReference }

// Reference names a bundle in a registry: oci://registry/repository[:tag][@digest].
type Reference struct {
	// Registry is the host, with a port if one was given ("ghcr.io",
	// "127.0.0.1:5000").
	Registry string
	// Repository is the path inside the registry ("acme/orders").
	Repository string
	// Tag is empty when not given.
	Tag string
	// Digest ("sha256:…") is empty when not given. When set it is what is
	// pulled, and the content is verified against it.
	Digest string
}

var (
	// A registry host: DNS labels or an IPv4 address, or a bracketed IPv6
	// address, with an optional port.
	hostRE = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)
	// One repository path component, as the OCI distribution spec has it.
	componentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	tagRE       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	digestRE    = regexp.MustCompile(`^(?:sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$`)
)

const (
	// maxNameLength bounds registry plus repository, as registries do.
	maxNameLength = 255
	// maxRefLength bounds a whole reference as written.
	maxRefLength = 1024
	// example closes messages with the shape that is accepted.
	example = "want [oci://]registry/repository[:tag][@digest], e.g. oci://ghcr.io/acme/payments:1.0.0"
)

// IsReference reports whether s is written as a registry reference
// (oci://…) rather than a local path. It says nothing of its grammar:
// [ParseReference] checks that.
func IsReference(s string) bool { return strings.HasPrefix(s, Scheme) }

// ParseReference parses "[oci://]registry/repository[:tag][@digest]". The
// registry must be explicit (it contains a "." or a ":" or is "localhost"):
// there is no implied Docker Hub. Tag and digest are split off the
// repository here and nowhere else. An error is a *[ReferenceError], which
// wraps [ErrInvalidReference] and says what is accepted.
func ParseReference(s string) (Reference, error) {
	bad := func(format string, args ...any) (Reference, error) {
		return Reference{}, &ReferenceError{Ref: s, Reason: fmt.Sprintf(format, args...)}
	}
	if len(s) > maxRefLength {
		return bad("it is %d bytes long; the limit is %d", len(s), maxRefLength)
	}
	rest := strings.TrimPrefix(s, Scheme)
	if rest == "" {
		return bad("empty: it has no registry host; %s", example)
	}
	var ref Reference
	if name, dgst, ok := strings.Cut(rest, "@"); ok {
		if !digestRE.MatchString(dgst) {
			return bad("digest %q is not valid; want sha256:<64 lowercase hex> or sha512:<128 lowercase hex>", dgst)
		}
		d, err := digest.Parse(dgst)
		if err != nil {
			return bad("digest %q: %v", dgst, err)
		}
		ref.Digest = d.String()
		rest = name
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("%q has no registry host; %s", rest, example)
	}
	if path == "" {
		return bad("the repository is missing; %s", example)
	}
	if !hostRE.MatchString(host) {
		return bad("registry %q is not a host[:port], e.g. ghcr.io or localhost:5000", host)
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		if port, err := strconv.Atoi(host[i+1:]); err != nil || port < 1 || port > 65535 {
			return bad("registry port %q: want 1..65535", host[i+1:])
		}
	}
	if !strings.ContainsAny(host, ".:") && host != "localhost" {
		return bad("%q is not a registry host (no \".\" or \":\"); write the registry explicitly, e.g. docker.io/%s", host, rest)
	}
	ref.Registry = host
	if i := strings.LastIndexByte(path, ':'); i >= 0 {
		ref.Tag = path[i+1:]
		path = path[:i]
		if !tagRE.MatchString(ref.Tag) {
			return bad("tag %q is not valid; a tag is 1-128 characters of letters, digits, '_', '.' and '-', not starting with '.' or '-'", ref.Tag)
		}
	}
	for _, c := range strings.Split(path, "/") {
		if !componentRE.MatchString(c) {
			return bad("repository path component %q is not valid; use lowercase letters and digits separated by '.', '_', '__' or '-'", c)
		}
	}
	if len(host)+1+len(path) > maxNameLength {
		return bad("registry and repository are longer than %d characters", maxNameLength)
	}
	ref.Repository = path
	return ref, nil
}

// LocalScheme optionally prefixes a local bundle reference.
const LocalScheme = "file://"

// BundleRef is a reference to a bundle as contracts and callers write it: a
// registry reference (oci://…) or a local directory (file://path or a bare
// path).
type BundleRef struct {
	// Local is the directory a local reference names, without file://;
	// empty for a registry reference.
	Local string
	// OCI is the parsed registry reference; zero for a local one.
	OCI Reference
}

// IsLocal reports whether r names a local directory.
func (r BundleRef) IsLocal() bool { return r.OCI.Registry == "" }

// ParseBundleRef tells a registry reference from a local one: oci://… is
// parsed by [ParseReference], file://path and a bare path are local. Any
// other scheme, and an empty reference, are refused with what is accepted.
// This is the one place kubepact reads a bundle reference.
func ParseBundleRef(s string) (BundleRef, error) {
	switch {
	case IsReference(s):
		r, err := ParseReference(s)
		return BundleRef{OCI: r}, err
	case strings.HasPrefix(s, LocalScheme):
		p := strings.TrimPrefix(s, LocalScheme)
		if strings.TrimSpace(p) == "" {
			return BundleRef{}, fmt.Errorf("%s names no directory; write file://path/to/bundle or a bare path", s)
		}
		return BundleRef{Local: p}, nil
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		return BundleRef{}, fmt.Errorf("scheme %q is not supported; use oci://registry/repository[:tag][@digest], file://path or a bare local path", scheme)
	case strings.TrimSpace(s) == "":
		return BundleRef{}, errors.New("reference is empty")
	}
	return BundleRef{Local: s}, nil
}

// String returns the reference without the oci:// prefix:
// registry/repository[:tag][@digest].
func (r Reference) String() string {
	var b strings.Builder
	b.WriteString(r.Registry)
	b.WriteByte('/')
	b.WriteString(r.Repository)
	if r.Tag != "" {
		b.WriteByte(':')
		b.WriteString(r.Tag)
	}
	if r.Digest != "" {
		b.WriteByte('@')
		b.WriteString(r.Digest)
	}
	return b.String()
}

// WithDigest returns r pinned to d, keeping its tag for readability.
func (r Reference) WithDigest(d digest.Digest) Reference {
	r.Digest = d.String()
	return r
}

// validate checks a Reference built by hand rather than by ParseReference.
func (r Reference) validate() error {
	if r.Registry == "" || r.Repository == "" {
		return fmt.Errorf("%w %q: registry and repository are required", ErrInvalidReference, r.String())
	}
	_, err := ParseReference(r.String())
	return err
}
