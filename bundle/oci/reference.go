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
)

// maxNameLength bounds registry plus repository, as registries do.
const maxNameLength = 255

// ParseReference parses "[oci://]registry/repository[:tag][@digest]". The
// registry must be explicit (it contains a "." or a ":" or is "localhost"):
// there is no implied Docker Hub.
func ParseReference(s string) (Reference, error) {
	bad := func(format string, args ...any) (Reference, error) {
		return Reference{}, fmt.Errorf("%w %q: %s", ErrInvalidReference, s, fmt.Sprintf(format, args...))
	}
	rest := strings.TrimPrefix(s, Scheme)
	if rest == "" {
		return bad("empty")
	}
	var ref Reference
	if name, dgst, ok := strings.Cut(rest, "@"); ok {
		d, err := digest.Parse(dgst)
		if err != nil {
			return bad("digest %q: %v", dgst, err)
		}
		ref.Digest = d.String()
		rest = name
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok || path == "" {
		return bad("want registry/repository, e.g. ghcr.io/acme/orders:1.0.0")
	}
	if !hostRE.MatchString(host) {
		return bad("registry %q is not a host[:port]", host)
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
			return bad("tag %q: want [A-Za-z0-9_][A-Za-z0-9._-]{0,127}", ref.Tag)
		}
	}
	for _, c := range strings.Split(path, "/") {
		if !componentRE.MatchString(c) {
			return bad("repository component %q: want lowercase letters and digits separated by '.', '_', '__' or '-'", c)
		}
	}
	if len(host)+1+len(path) > maxNameLength {
		return bad("registry and repository are longer than %d characters", maxNameLength)
	}
	ref.Repository = path
	return ref, nil
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
