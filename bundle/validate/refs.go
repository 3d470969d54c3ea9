package validate

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// refKind classifies a bundle reference as written in pacto.yaml.
type refKind int

const (
	refOCI   refKind = iota // oci://registry/repository[:tag][@digest]
	refLocal                // file://path or a bare path (development only)
)

// ociRef is a parsed oci:// reference.
type ociRef struct {
	Registry, Repository, Tag, Digest string
}

var (
	registryRe  = regexp.MustCompile(`^(localhost|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$|^localhost(:[0-9]{1,5})?$|^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?:[0-9]{1,5}$`)
	repoPartRe  = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
	tagRe       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	digestRe    = regexp.MustCompile(`^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$`)
	maxRefBytes = 1024
)

// classifyRef tells OCI refs from local ones and rejects other schemes.
func classifyRef(ref string) (refKind, error) {
	switch {
	case strings.HasPrefix(ref, "oci://"):
		return refOCI, nil
	case strings.HasPrefix(ref, "file://"):
		return refLocal, nil
	case strings.Contains(ref, "://"):
		scheme, _, _ := strings.Cut(ref, "://")
		return 0, fmt.Errorf("scheme %q is not supported; use oci://registry/repository[:tag][@digest], file://path or a bare local path", scheme)
	case strings.TrimSpace(ref) == "":
		return 0, fmt.Errorf("reference is empty")
	default:
		return refLocal, nil
	}
}

// parseOCIRef checks the grammar of an oci:// reference.
func parseOCIRef(ref string) (ociRef, error) {
	var r ociRef
	if len(ref) > maxRefBytes {
		return r, fmt.Errorf("reference is %d bytes long; the limit is %d", len(ref), maxRefBytes)
	}
	rest, ok := strings.CutPrefix(ref, "oci://")
	if !ok {
		return r, fmt.Errorf("an OCI reference starts with oci://")
	}
	if name, digest, ok := strings.Cut(rest, "@"); ok {
		if !digestRe.MatchString(digest) {
			return r, fmt.Errorf("digest %q is not valid; expected sha256:<64 lowercase hex> or sha512:<128 lowercase hex>", digest)
		}
		r.Digest = digest
		rest = name
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return r, fmt.Errorf("expected oci://registry/repository[:tag][@digest], e.g. oci://ghcr.io/acme/payments:1.0.0; %q has no registry host", ref)
	}
	r.Registry, rest = rest[:slash], rest[slash+1:]
	if !registryRe.MatchString(r.Registry) {
		return r, fmt.Errorf("registry %q is not a host name (with an optional :port), e.g. ghcr.io or localhost:5000", r.Registry)
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		r.Tag, rest = rest[i+1:], rest[:i]
		if !tagRe.MatchString(r.Tag) {
			return r, fmt.Errorf("tag %q is not valid; a tag is 1-128 characters of letters, digits, '_', '.' and '-', not starting with '.' or '-'", r.Tag)
		}
	}
	if rest == "" {
		return r, fmt.Errorf("repository is missing; expected oci://registry/repository")
	}
	for _, part := range strings.Split(rest, "/") {
		if !repoPartRe.MatchString(part) {
			return r, fmt.Errorf("repository path component %q is not valid; use lowercase letters and digits separated by '.', '_', '__' or '-'", part)
		}
	}
	r.Repository = rest
	return r, nil
}

// checkRefSyntax validates a ref's grammar (OCI refs only; local paths are
// checked when resolved).
func checkRefSyntax(ref string) (refKind, ociRef, error) {
	k, err := classifyRef(ref)
	if err != nil {
		return k, ociRef{}, err
	}
	if k != refOCI {
		return k, ociRef{}, nil
	}
	r, err := parseOCIRef(ref)
	return k, r, err
}

// nestedRef turns a ref declared by the bundle that parent names into the
// ref the Resolver is asked for. The Resolver resolves local refs against
// the bundle being validated, so a local ref of a local bundle is joined to
// that bundle's own path; a local ref of a bundle from a registry is not
// followed at all, since remote content must not make us read local
// directories. ref's syntax has been checked.
func nestedRef(parent, ref string) (string, error) {
	if strings.HasPrefix(ref, "oci://") {
		return ref, nil
	}
	if strings.HasPrefix(parent, "oci://") {
		return "", fmt.Errorf("%s refers to the local path %q; local refs of a bundle from a registry are not followed", parent, ref)
	}
	p := strings.TrimPrefix(ref, "file://")
	if path.IsAbs(p) {
		return p, nil
	}
	return path.Join(strings.TrimPrefix(parent, "file://"), p), nil
}
