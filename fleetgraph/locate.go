package fleetgraph

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// RevisionLocation is one revision of a service as Locate finds it: where
// its bundle can be read again, and the targets that run it.
type RevisionLocation struct {
	Key     string
	Service string
	Version string
	Digest  string
	// Location is Revision.Location (a local bundle directory or a
	// digest-pinned oci:// reference), else the revision's resolved
	// reference when it pins the revision's digest; empty otherwise.
	Location string
	// Targets are the keys of the targets linked to this revision, sorted.
	Targets []string
}

// LocateQuery names the revisions Locate finds.
type LocateQuery struct {
	// Service is a service key, or a name unique across domains.
	Service string
	// Version selects the revisions of one version; empty selects all.
	Version string
	// Targets fills RevisionLocation.Targets, which costs a link per
	// target of the service.
	Targets bool
}

// Locate finds the revisions of a service for questions the snapshot does
// not store, which need the bundle itself: newest semantic version first.
// A miss carries the reason and did-you-mean candidates (the service's
// versions when the version is the miss).
func (s *Snapshot) Locate(q LocateQuery) ([]RevisionLocation, Miss) {
	service, version := q.Service, q.Version
	sv, miss := s.findService(service)
	if sv == nil {
		return nil, miss
	}
	linked := map[string][]string{}
	for _, t := range sv.tgts {
		if !q.Targets {
			break
		}
		if rk, _, _ := s.link(t); rk != "" {
			linked[rk] = append(linked[rk], t.Key())
		}
	}
	var out []RevisionLocation
	var versions []string
	for _, r := range sv.revs {
		versions = append(versions, r.Version)
		if version != "" && r.Version != version {
			continue
		}
		tk := linked[r.Key()]
		slices.Sort(tk)
		out = append(out, RevisionLocation{Key: r.Key(), Service: sv.key, Version: r.Version, Digest: r.Digest, Location: locationOf(r), Targets: tk})
	}
	if len(out) == 0 {
		slices.Sort(versions)
		return nil, Miss{Reason: fmt.Sprintf("service %s has no revision %s in the fleet snapshot", sv.key, version), Candidates: slices.Compact(versions)}
	}
	slices.SortStableFunc(out, func(a, b RevisionLocation) int { return compareVersions(b.Version, a.Version) })
	return out, Miss{Found: true}
}

// locationOf is where a revision's bundle can be read again: what its
// source recorded, else its resolved reference when that pins the digest
// (a feed that projects revisions without reading them, such as the
// cluster's, records none).
func locationOf(r *Revision) string {
	if r.Location != "" {
		return r.Location
	}
	if ref := parseRef(r.ResolvedRef); ref.digest != "" && ref.digest == r.Digest && strings.HasPrefix(r.ResolvedRef, "oci://") {
		return r.ResolvedRef
	}
	return ""
}

// compareVersions orders semantic versions, and anything else after them
// by text.
func compareVersions(a, b string) int {
	va, ea := semver.NewVersion(a)
	vb, eb := semver.NewVersion(b)
	switch {
	case ea == nil && eb == nil:
		return va.Compare(vb)
	case ea == nil:
		return 1
	case eb == nil:
		return -1
	}
	return cmp.Compare(a, b)
}

// LocateDigest finds the revisions whose content digest is d (one bundle
// may be a revision of services in several domains), by key. Like every
// query it answers from this snapshot only: in a restricted view, a
// revision the reader may not see is not found, exactly as an unknown
// digest.
func (s *Snapshot) LocateDigest(d string) []RevisionLocation {
	keys, _ := s.byDigest.get(d)
	out := make([]RevisionLocation, 0, len(keys))
	for _, k := range keys {
		r := s.revision(k)
		if r == nil {
			continue
		}
		out = append(out, RevisionLocation{Key: k, Service: r.ServiceKey(), Version: r.Version, Digest: r.Digest, Location: locationOf(r)})
	}
	slices.SortFunc(out, func(a, b RevisionLocation) int { return cmp.Compare(a.Key, b.Key) })
	return out
}
