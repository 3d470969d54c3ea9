package mcp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// Fleet-only bundle arguments (Options.FleetRefsOnly): what the operator's
// tools accept where a tool elsewhere takes a bundle reference. A caller
// names a revision of the fleet it may see, and the bundle read is the one
// that revision's source recorded (in the operator, the digest its
// ServiceContract resolved), never a location the caller chose: nothing
// is dialled or opened on a caller's say-so, so a refusal cannot tell an
// open port from a closed one, nor a file that exists from one that does
// not.

// fleetRefsAccepted says what a fleet-only bundle argument accepts.
const fleetRefsAccepted = "only fleet revisions are read here (in the operator, the bundles its ServiceContracts resolved): give a service name, name@version or the sha256 digest of a revision you may see"

// fleetRefDescription describes a fleet-only bundle argument.
const fleetRefDescription = "a fleet revision you may see: service name (its newest revision), name@version, or the revision's sha256 digest (also SERVICE@sha256:…)"

// revisionDigestRE is a content digest as revision keys carry it.
var revisionDigestRE = regexp.MustCompile(digestPattern)

// refusedFleetRef refuses, naming what is accepted, an argument that names
// a bundle outside the fleet: a registry reference, a URL or a local path.
// The answer says only which kind of reference it was, so it is the same
// whatever the reference names, and whether or not that exists.
func refusedFleetRef(field, arg string) *ToolError {
	var kind string
	switch {
	case oci.IsReference(arg):
		kind = "an oci:// reference"
	case strings.HasPrefix(arg, oci.LocalScheme), strings.HasPrefix(arg, "/"), strings.HasPrefix(arg, "."),
		strings.HasPrefix(arg, "~"), strings.Contains(arg, `\`), filepath.IsAbs(arg):
		kind = "a local path"
	case strings.Contains(arg, "://"):
		kind = "a URL"
	default:
		return nil
	}
	return &ToolError{Code: CodeInvalidArgument, Field: field, Message: fleetRefsAccepted + "; got " + kind}
}

// fleetRevision finds the revision arg names in snap, which is the
// caller's view: a revision it may not see is not there, and answers as
// one that does not exist.
func fleetRevision(snap *fleetgraph.Snapshot, field, arg string) (fleetgraph.RevisionLocation, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return fleetgraph.RevisionLocation{}, &ToolError{Code: CodeInvalidArgument, Field: field, Message: field + " is empty: " + fleetRefsAccepted}
	}
	if te := refusedFleetRef(field, arg); te != nil {
		return fleetgraph.RevisionLocation{}, te
	}
	noDigest := &ToolError{Code: source.CodeRefNotFound, Field: field,
		Message: "no revision you may see has that digest: pacto_fleet_get SERVICE lists a service's revisions and their digests"}
	if revisionDigestRE.MatchString(arg) {
		revs := snap.LocateDigest(arg)
		if len(revs) == 0 {
			return fleetgraph.RevisionLocation{}, noDigest
		}
		return revs[0], nil
	}
	name, version := splitVersion(arg)
	query := fleetgraph.LocateQuery{Service: name, Version: version}
	pinned := revisionDigestRE.MatchString(version)
	if pinned {
		query.Version = ""
	}
	revs, miss := snap.Locate(query)
	if !miss.Found {
		te := &ToolError{Code: source.CodeRefNotFound, Field: field, Message: miss.Reason}
		if len(miss.Candidates) > 0 {
			te.DidYouMean, te.Accepted = miss.Candidates[0], miss.Candidates
		}
		return fleetgraph.RevisionLocation{}, te
	}
	if !pinned {
		return revs[0], nil
	}
	for _, r := range revs {
		if r.Digest == version {
			return r, nil
		}
	}
	return fleetgraph.RevisionLocation{}, noDigest
}

// loadFleetRevision reads the bundle of a fleet revision where its source
// recorded it: a digest-pinned registry reference (through the server's
// registry client and its policy) or a directory a local source scanned.
func loadFleetRevision(ctx context.Context, loader *source.RefLoader, field string, r fleetgraph.RevisionLocation) (*bundle.Bundle, error) {
	switch {
	case r.Location == "":
		return nil, &ToolError{Code: source.CodeRefUnavailable, Field: field,
			Message: fmt.Sprintf("revision %s of %s came from a source that does not say where its bundle can be read", r.Version, r.Service)}
	case bundle.IsOCIRef(r.Location):
		return readRef(ctx, loader, field, r.Location)
	}
	b, err := readDir(ctx, field, r.Service+" "+r.Version, r.Location)
	if te := (*ToolError)(nil); errors.As(err, &te) {
		return nil, err // the budget's answer
	}
	if err != nil {
		return nil, &ToolError{Code: source.CodeRefUnavailable, Field: field,
			Message: fmt.Sprintf("revision %s of %s could not be read again from its source directory; it may have changed since the fleet snapshot", r.Version, r.Service)}
	}
	return b, nil
}

// impactRef reads the bundle an impact argument names: with fleet-only
// references a revision of snap, else the reference itself through the
// loader (a registry reference, or a directory in the workspace).
func (f *fleetState) impactRef(ctx context.Context, snap *fleetgraph.Snapshot, field, arg string) (*bundle.Bundle, error) {
	if !f.refsOnly {
		return readRef(ctx, f.loader, field, arg)
	}
	r, err := fleetRevision(snap, field, arg)
	if err != nil {
		return nil, err
	}
	return loadFleetRevision(ctx, f.loader, field, r)
}

// impactSpec is pacto_impact's description and input schema: fleet-only
// arguments say what they accept.
func impactSpec(refsOnly bool) (string, *jsonschema.Schema) {
	if !refsOnly {
		return "Diff two contract revisions (BREAKING, POTENTIAL_BREAKING, NON_BREAKING) and list the fleet's dependents, most affected first, with risk and versionBump. Local dirs must be in the workspace.", nil
	}
	in := itemSchema[impactArgs](nil)
	for _, name := range []string{"old_ref", "new_ref"} {
		in.Properties[name].Description = fleetRefDescription
	}
	return "Diff two revisions of a contract in the fleet (each BREAKING, POTENTIAL_BREAKING or NON_BREAKING) and list the fleet's dependents with their risk (atRisk, excluded) and versionBump. old_ref and new_ref name revisions you may see (name, name@version or digest); registry references and paths are not accepted here.", in
}
