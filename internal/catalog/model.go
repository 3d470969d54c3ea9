package catalog

import (
	"strings"
	"time"
)

// SchemaVersion is the catalog format, as Pacto names it.
const SchemaVersion = "pacto.dev/catalog/v1"

// Content schemes of a revision's identity.
const (
	SchemeOCI   = "oci"   // pulled from a registry: the manifest digest
	SchemeLocal = "local" // a local directory: the digest its packed layer would have once pushed
)

// Completeness of a catalog.
const (
	// CompletenessComplete: everything reachable from the roots resolved.
	CompletenessComplete = "complete"
	// CompletenessPartial: some of it did not; a revision that is not
	// here is unknown, not proven absent.
	CompletenessPartial = "partial"
)

// Reason codes: why a root or a dependency did not resolve. Sanitised: the
// message beside one is ours, never a registry's text.
const (
	ReasonNotFound         = "NOT_FOUND"
	ReasonAuthFailed       = "AUTH_FAILED"
	ReasonCancelled        = "CANCELLED"
	ReasonUnavailable      = "UNAVAILABLE"
	ReasonInvalidReference = "INVALID_REFERENCE"
	ReasonInvalidContract  = "INVALID_CONTRACT"
	ReasonInvalidIdentity  = "INVALID_IDENTITY"
	ReasonBoundExceeded    = "BOUND_EXCEEDED"
	// ReasonNotAllowed: the registry policy refused the registry (not in
	// --allowed-registries, or at an address only a named one may be at).
	ReasonNotAllowed = "REGISTRY_NOT_ALLOWED"
	// ReasonResolving: not resolved yet; the first resolution is under
	// way (kubepact's, not Pacto's: Pacto serves nothing before it).
	ReasonResolving = "RESOLVING"
)

// Limitation codes: what the whole answer lacks.
const (
	LimitRootUnresolved       = "ROOT_UNRESOLVED"
	LimitUnresolvedDependency = "UNRESOLVED_DEPENDENCY"
	LimitRoots                = "ROOT_LIMIT_EXCEEDED"
	LimitRevisions            = "REVISION_LIMIT_EXCEEDED"
	LimitEdges                = "EDGE_LIMIT_EXCEEDED"
	LimitDepth                = "DEPTH_LIMIT_EXCEEDED"
	LimitPathLength           = "PATH_LENGTH_LIMIT_EXCEEDED"
	LimitPaths                = "PATH_LIMIT_EXCEEDED"
	LimitUnresolved           = "UNRESOLVED_LIMIT_EXCEEDED"
	LimitConflicts            = "CONFLICT_LIMIT_EXCEEDED"
	LimitLimitations          = "LIMITATION_LIMIT_EXCEEDED"
	LimitCancelled            = "CANCELLED"
	// LimitResolving: the catalog is the placeholder served while the
	// first resolution is under way (see [NewResolvingLive]).
	LimitResolving = "RESOLVING"
)

// Ranks of a revision in the closure.
const (
	RankRoot       = "root"       // a requested root
	RankDirect     = "direct"     // a dependency of a root
	RankTransitive = "transitive" // anything further
)

// Conflict kinds.
const (
	// ConflictVersion: one service is in the closure at several versions.
	ConflictVersion = "version"
	// ConflictContent: one service and version with several contents.
	ConflictContent = "content"
	// ConflictDeclaration: a dependency resolved to a version its
	// compatibility range does not admit.
	ConflictDeclaration = "declaration"
)

// ServiceID names a service: the registry and organisation path it is
// published under (empty for a local bundle) and its contract's name. One
// bundle mirrored into two registries is two services.
type ServiceID struct {
	Domain string `json:"domain,omitempty"`
	Name   string `json:"name"`
}

// ContentID names content: how it was read and its digest.
type ContentID struct {
	Scheme string `json:"scheme"`
	Digest string `json:"digest"`
}

// RevisionID is a revision's identity: service and content. Content alone
// is not enough, because one bundle mirrored into two repositories is two
// services.
type RevisionID struct {
	Service ServiceID `json:"service"`
	Content ContentID `json:"content"`
}

// key orders and indexes revision ids; its fields cannot contain NUL.
func (id RevisionID) key() string {
	return strings.Join([]string{id.Service.Domain, id.Service.Name, id.Content.Scheme, id.Content.Digest}, "\x00")
}

// String is the id as one line, for messages.
func (id RevisionID) String() string {
	s := id.Service.Name
	if id.Service.Domain != "" {
		s = id.Service.Domain + "/" + s
	}
	return s + "@" + id.Content.Scheme + ":" + id.Content.Digest
}

// Reason says why something did not resolve.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Limitation is one thing the whole answer lacks.
type Limitation struct {
	Code    string `json:"code"`
	Ref     string `json:"ref,omitempty"`
	Message string `json:"message"`
}

// Meta is the envelope both resources carry, so either can be read alone.
type Meta struct {
	SchemaVersion string `json:"schemaVersion"`
	// CatalogID fingerprints what was resolved (contents, topology,
	// completeness, bounds, limitation codes) and nothing else: not the
	// time, the roots' order, the references as written or local paths.
	CatalogID string `json:"catalogId"`
	// GeneratedAt is when this catalog was resolved; a refresh that finds
	// the same catalogId keeps the catalog, and so its time.
	GeneratedAt    time.Time    `json:"generatedAt"`
	Completeness   string       `json:"completeness"`
	Bounds         Bounds       `json:"bounds"`
	RequestedRoots []string     `json:"requestedRoots"`
	Limitations    []Limitation `json:"limitations"`
}

// Root is one requested root and what it resolved to.
type Root struct {
	// ID is the root's ordinal among the requested roots.
	ID           int         `json:"id"`
	RequestedRef string      `json:"requestedRef"`
	Resolved     bool        `json:"resolved"`
	Revision     *RevisionID `json:"revision,omitempty"`
	// ResolvedRef is the registry reference pinned to the digest the tag
	// resolved to (registry roots only).
	ResolvedRef string  `json:"resolvedRef,omitempty"`
	Reason      *Reason `json:"reason,omitempty"`
}

// Step is one edge of a path: the declaring revision and the index of the
// dependency in its contract.
type Step struct {
	From  RevisionID `json:"from"`
	Index int        `json:"index"`
}

// Path is one way a revision is reached from a root.
type Path struct {
	Root  int    `json:"root"`
	Steps []Step `json:"steps"`
}

// Revision is one deduplicated revision of the closure.
type Revision struct {
	RevisionID
	Version      string `json:"version,omitempty"`
	PactoVersion string `json:"pactoVersion,omitempty"`
	Owner        string `json:"owner,omitempty"`
	// RequestedRefs are the references, as written, that reached it;
	// ResolvedRefs the pinned registry references they resolved to.
	RequestedRefs  []string `json:"requestedRefs"`
	ResolvedRefs   []string `json:"resolvedRefs"`
	Roots          []int    `json:"roots"`
	Paths          []Path   `json:"paths"`
	PathsTruncated bool     `json:"pathsTruncated,omitempty"`
	MinDepth       int      `json:"minDepth"`
	Rank           string   `json:"rank"`
}

// Declaration is a dependency as a contract declares it: the revision and
// the dependency's index in it.
type Declaration struct {
	From  RevisionID `json:"from"`
	Index int        `json:"index"`
}

// Edge is a dependency that resolved.
type Edge struct {
	Declaration Declaration `json:"declaration"`
	Name        string      `json:"name"`
	Ref         string      `json:"ref"`
	Constraint  string      `json:"constraint,omitempty"`
	Required    bool        `json:"required"`
	To          RevisionID  `json:"to"`
}

// Unresolved is a dependency that did not resolve, and why.
type Unresolved struct {
	Declaration Declaration `json:"declaration"`
	Name        string      `json:"name"`
	Ref         string      `json:"ref"`
	Constraint  string      `json:"constraint,omitempty"`
	Required    bool        `json:"required"`
	Reason      Reason      `json:"reason"`
}

// Conflict is a disagreement the catalog leaves visible rather than
// resolving it.
type Conflict struct {
	Kind        string       `json:"kind"`
	Service     ServiceID    `json:"service"`
	Version     string       `json:"version,omitempty"`
	Declaration *Declaration `json:"declaration,omitempty"`
	Versions    []string     `json:"versions"`
	Revisions   []RevisionID `json:"revisions"`
}

// Cycle is a dependency cycle, rotated so that its smallest identity is
// first.
type Cycle struct {
	Revisions []RevisionID `json:"revisions"`
}

// Summary is the pacto://catalog resource: what this catalog is.
type Summary struct {
	Meta  Meta   `json:"meta"`
	Roots []Root `json:"roots"`
}

// Closure is the pacto://catalog/closure resource: what is in it. Empty
// collections are [] on the wire, never null.
type Closure struct {
	Meta       Meta         `json:"meta"`
	Revisions  []Revision   `json:"revisions"`
	Edges      []Edge       `json:"edges"`
	Unresolved []Unresolved `json:"unresolved"`
	Conflicts  []Conflict   `json:"conflicts"`
	Cycles     []Cycle      `json:"cycles"`
}

// Catalog is one resolved catalog. It is never mutated once built; the
// slices its methods return are copies of the headers, shared elements
// included, so callers must not modify them.
type Catalog struct {
	meta       Meta
	roots      []Root
	revisions  []Revision // sorted by identity
	byKey      map[string]int
	edges      []Edge
	unresolved []Unresolved
	conflicts  []Conflict
	cycles     []Cycle
	// resolving marks the placeholder served before the first
	// resolution has finished.
	resolving bool
}

// Resolving reports whether c is the placeholder a [Live] serves until
// its first resolution has finished: every root unresolved with
// RESOLVING, a RESOLVING limitation, completeness partial.
func (c *Catalog) Resolving() bool { return c.resolving }

// Meta returns the envelope.
func (c *Catalog) Meta() Meta { return c.meta }

// ID returns the catalog id.
func (c *Catalog) ID() string { return c.meta.CatalogID }

// Summary returns the pacto://catalog document.
func (c *Catalog) Summary() *Summary { return &Summary{Meta: c.meta, Roots: c.roots} }

// Closure returns the pacto://catalog/closure document.
func (c *Catalog) Closure() *Closure {
	return &Closure{Meta: c.meta, Revisions: c.revisions, Edges: c.edges, Unresolved: c.unresolved, Conflicts: c.conflicts, Cycles: c.cycles}
}

// Revision returns the revision with exactly this identity.
func (c *Catalog) Revision(id RevisionID) (*Revision, bool) {
	i, ok := c.byKey[id.key()]
	if !ok {
		return nil, false
	}
	return &c.revisions[i], true
}

// Candidates returns the identities of up to max revisions that share the
// name or the digest of id: what a caller probably meant by a miss.
func (c *Catalog) Candidates(id RevisionID, max int) []RevisionID {
	var out []RevisionID
	for i := range c.revisions {
		r := &c.revisions[i]
		if len(out) == max {
			break
		}
		if r.Service.Name == id.Service.Name || r.Content.Digest == id.Content.Digest {
			out = append(out, r.RevisionID)
		}
	}
	return out
}
