package validate

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/kubepact/kubepact/bundle/oci"
)

// refKind classifies a bundle reference as written in pacto.yaml.
type refKind int

const (
	refOCI   refKind = iota // oci://registry/repository[:tag][@digest]
	refLocal                // file://path or a bare path (development only)
)

// checkRefSyntax validates a ref's grammar (OCI refs only; local paths are
// checked when resolved), with the one parser every part of kubepact uses.
// An OCI grammar error gives its reason without the reference: the finding
// names it already.
func checkRefSyntax(ref string) (refKind, oci.Reference, error) {
	r, err := oci.ParseBundleRef(ref)
	var re *oci.ReferenceError
	switch {
	case errors.As(err, &re):
		return refOCI, oci.Reference{}, errors.New(re.Reason)
	case err != nil:
		return 0, oci.Reference{}, err
	case r.IsLocal():
		return refLocal, oci.Reference{}, nil
	}
	return refOCI, r.OCI, nil
}

// nestedRef turns a ref declared by the bundle that parent names into the
// ref the Resolver is asked for. The Resolver resolves local refs against
// the bundle being validated, so a local ref of a local bundle is joined to
// that bundle's own path; a local ref of a bundle from a registry is not
// followed at all, since remote content must not make us read local
// directories. ref's syntax has been checked.
func nestedRef(parent, ref string) (string, error) {
	if oci.IsReference(ref) {
		return ref, nil
	}
	if oci.IsReference(parent) {
		return "", fmt.Errorf("%s refers to the local path %q; local refs of a bundle from a registry are not followed", parent, ref)
	}
	p := strings.TrimPrefix(ref, oci.LocalScheme)
	if path.IsAbs(p) {
		return p, nil
	}
	return path.Join(strings.TrimPrefix(parent, oci.LocalScheme), p), nil
}
