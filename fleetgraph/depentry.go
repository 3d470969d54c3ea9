package fleetgraph

import (
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"
)

// DependencyEntry is what a contract's dependencies list needs to depend
// on a fleet service: pacto_fleet_get returns one ready to paste, and
// authoring resolves a bare dependency name to one.
type DependencyEntry struct {
	Name          string `json:"name"`
	Ref           string `json:"ref,omitempty"`
	Required      bool   `json:"required"`
	Compatibility string `json:"compatibility,omitempty"`
	// Version is the newest version the fleet knows, which Compatibility
	// was derived from.
	Version string `json:"version,omitempty"`
	// Note says what is missing when Ref is empty.
	Note string `json:"note,omitempty"`
}

// canonicalRefs are the registry references (oci://domain/name, without
// tag or digest) a service is known by: its own domain, the refs its
// revisions were pulled or requested by, and the refs other contracts in
// the fleet reach it by. Sorted, distinct.
func (s *Snapshot) canonicalRefs(sv *service) []string {
	var out []string
	addRef := func(raw string) {
		r := parseRef(raw)
		if r.oci && r.domain != "" && r.repo != "" {
			out = append(out, "oci://"+r.domain+"/"+r.repo)
		}
	}
	if sv.domain != "" {
		out = append(out, "oci://"+sv.domain+"/"+sv.name)
	}
	for _, r := range sv.revs {
		addRef(r.RequestedRef)
		addRef(r.ResolvedRef)
	}
	for _, rel := range s.inbound(sv) {
		addRef(rel.To)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// newestVersion is the highest semantic version among a service's
// revisions ("" when none parses).
func newestVersion(sv *service) string {
	var best *semver.Version
	for _, r := range sv.revs {
		v, err := semver.NewVersion(r.Version)
		if err == nil && (best == nil || v.GreaterThan(best)) {
			best = v
		}
	}
	if best == nil {
		return ""
	}
	return best.Original()
}

// dependencyEntry builds the entry for sv.
func (s *Snapshot) dependencyEntry(sv *service, refs []string) *DependencyEntry {
	e := &DependencyEntry{Name: sv.name, Required: true, Version: newestVersion(sv)}
	if v, err := semver.NewVersion(e.Version); err == nil {
		e.Compatibility = fmt.Sprintf("^%d.%d.0", v.Major(), v.Minor())
	}
	switch len(refs) {
	case 0:
		e.Note = "no registry reference is known for " + sv.name + " (its bundles were read from local directories): publish it, then use its oci:// reference as ref"
	case 1:
		e.Ref = refs[0]
	default:
		e.Ref = refs[0]
		e.Note = fmt.Sprintf("%s is known by %d references (see refs); ref is the first", sv.name, len(refs))
	}
	return e
}

// Dependency resolves the service a dependency names, by key or unique
// name, to a ready-to-use entry. A miss carries did-you-mean candidates
// (or, for a name several services share, their keys).
func (s *Snapshot) Dependency(name string) (*DependencyEntry, Miss) {
	sv, miss := s.findService(name)
	if sv == nil {
		return nil, miss
	}
	return s.dependencyEntry(sv, s.canonicalRefs(sv)), Miss{}
}
