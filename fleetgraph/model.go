package fleetgraph

import (
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Status is a compliance verdict, on a target or rolled up on a service.
type Status string

// Statuses, most severe first (Pacto's vocabulary). A service's status is
// the most severe of its targets'; NotEvaluated when it has none.
const (
	StatusInvalid      Status = "Invalid"
	StatusNonCompliant Status = "NonCompliant"
	StatusUnknown      Status = "Unknown"
	StatusWarning      Status = "Warning"
	StatusCompliant    Status = "Compliant"
	StatusReference    Status = "Reference"
	StatusNotEvaluated Status = "NotEvaluated"
)

// Statuses lists every status, most severe first.
func Statuses() []Status {
	return []Status{StatusInvalid, StatusNonCompliant, StatusUnknown, StatusWarning, StatusCompliant, StatusReference, StatusNotEvaluated}
}

// severity orders statuses: lower is more severe; -1 for an unknown value.
func (s Status) severity() int {
	return slices.Index(Statuses(), s)
}

// Valid reports whether s is one of the canonical statuses.
func (s Status) Valid() bool { return s.severity() >= 0 }

// LinkState says how a target was tied to a contract revision.
type LinkState string

// Link states. Only exact and inferred links carry a revision.
const (
	LinkExact      LinkState = "exact"      // the target's digest names the revision
	LinkInferred   LinkState = "inferred"   // a unique revision of the service has the target's tag as its version
	LinkAmbiguous  LinkState = "ambiguous"  // several revisions fit the tag; none is chosen
	LinkUnresolved LinkState = "unresolved" // no revision fits, or the digest names another service
)

// Relationship types (declared edges).
const (
	EdgeDependency    = "dependency"
	EdgeConfiguration = "configuration_reference"
	EdgePolicy        = "policy_reference"
)

// Revision is one contract revision as a source or an informer produces
// it: derived fields only, never the parsed contract or its files. The
// Builder copies it; a Revision handed over must not be changed afterwards.
type Revision struct {
	// Domain is the registry and organisation path the revision was
	// published under; empty for local bundles.
	Domain       string `json:"domain,omitempty"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	PactoVersion string `json:"pactoVersion,omitempty"`
	// Digest is the content identity (OCI manifest digest, sha256:...).
	Digest       string   `json:"digest"`
	RequestedRef string   `json:"requestedRef,omitempty"`
	ResolvedRef  string   `json:"resolvedRef,omitempty"`
	Owner        string   `json:"owner,omitempty"`
	Workload     string   `json:"workload,omitempty"`
	Interfaces   []string `json:"interfaces,omitempty"`   // name:type:visibility
	Capabilities []string `json:"capabilities,omitempty"` // capability types
	// Edges are the declared relationships: dependencies, then
	// configuration and policy references.
	Edges []Edge `json:"edges,omitempty"`
	// Readiness is nil when the contract declares none.
	Readiness *Readiness `json:"readiness,omitempty"`
	// Valid is nil when the revision was not validated.
	Valid    *bool     `json:"valid,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	// Source is the id of the source that contributed the revision.
	Source    string    `json:"source"`
	FetchedAt time.Time `json:"fetchedAt,omitzero"`
	// Location is where the bundle can be read again to answer questions
	// the snapshot does not store (a payload's schema, a field's meaning):
	// the directory of a local bundle, or the digest-pinned oci://
	// reference of a pulled one; empty when the source gave none. It is
	// not part of the revision's identity (nor of the snapshot id): the
	// same content read from another directory is the same revision.
	Location string `json:"-"`
	// Scopes are the namespaces of the objects that publish the revision
	// (ServiceContracts in several namespaces may publish one digest);
	// empty for a source outside any namespace (a local directory, an OCI
	// reference). The Builder keeps them sorted and distinct. A restricted
	// view (Snapshot.Restrict) shows the revision when it sees one of
	// them, and lists only the ones it sees.
	Scopes []string `json:"scopes,omitempty"`
	// OptionalConfigurations names the configurations the contract
	// declares required: false (Edges carry dependencies' required-ness).
	// Like Location it is not part of the identity: the digest already
	// fixes it.
	OptionalConfigurations []string `json:"-"`
}

// normScopes sorts and deduplicates a revision's scopes and drops empty
// names; nil when none is left.
func normScopes(in []string) []string {
	out := slices.DeleteFunc(slices.Clone(in), func(s string) bool { return s == "" })
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scopesOrUnscoped are the scopes a revision counts under: its own, or
// the empty scope when it has none.
func (r *Revision) scopesOrUnscoped() []string {
	if len(r.Scopes) == 0 {
		return []string{""}
	}
	return r.Scopes
}

// Key returns the revision's identity.
func (r *Revision) Key() string { return RevisionKey(r.ServiceKey(), r.Digest) }

// ServiceKey returns the key of the revision's service.
func (r *Revision) ServiceKey() string { return ServiceKey(r.Domain, r.Name) }

// Edge is one declared relationship as written in the contract.
type Edge struct {
	Type          string `json:"type"`
	Name          string `json:"name,omitempty"` // dependency or configuration/policy name
	Ref           string `json:"ref"`
	Required      bool   `json:"required,omitempty"`
	Compatibility string `json:"compatibility,omitempty"`
}

// edgeTarget is what an edge points at.
type edgeTarget struct {
	// domain and name are the service the reference names: its registry
	// and organisation path and its repository's last segment. They, not
	// a dependency's name, are the edge's identity: one bundle mirrored
	// into two registries is two services.
	domain, name string
	// alias is a dependency's own name for the service when it differs
	// from the reference's (pacto_create derives it from the reference,
	// users rename it); the edge falls back on it only when the reference
	// names no service.
	alias string
	// digest is the digest the reference pins, if any.
	digest string
	// key is ServiceKey(domain, name), made once: resolving an edge
	// looks it up on every walk.
	key string
}

// target parses what the edge points at.
func (e Edge) target() edgeTarget {
	r := parseRef(e.Ref)
	t := edgeTarget{domain: r.domain, name: r.repo, digest: r.digest, key: ServiceKey(r.domain, r.repo)}
	if e.Type == EdgeDependency && e.Name != r.repo {
		t.alias = e.Name
	}
	return t
}

// names are the service names the edge may resolve by: the reference's,
// then the alias.
func (t edgeTarget) names() []string {
	if t.alias == "" {
		return []string{t.name}
	}
	return []string{t.name, t.alias}
}

// Readiness is a revision's computed readiness declaration.
type Readiness struct {
	Score    int    `json:"score"`
	MinScore int    `json:"minScore"`
	Expires  string `json:"expires"` // YYYY-MM-DD
}

// Readiness states.
const (
	ReadinessPassing        = "passing"
	ReadinessBelowThreshold = "belowThreshold"
	ReadinessExpired        = "expired"
	ReadinessNotDeclared    = "notDeclared"
)

// state evaluates the readiness at a moment: expired after its date, else
// passing when the score reaches minScore.
func (r *Readiness) state(at time.Time) string {
	if r == nil {
		return ReadinessNotDeclared
	}
	if exp, err := time.Parse(time.DateOnly, r.Expires); err == nil && at.After(exp.Add(24*time.Hour)) {
		return ReadinessExpired
	}
	if r.Score >= r.MinScore {
		return ReadinessPassing
	}
	return ReadinessBelowThreshold
}

// Finding is a validation or evidence finding.
type Finding struct {
	Code        string `json:"code"`
	Severity    string `json:"severity,omitempty"`
	Category    string `json:"category,omitempty"`
	SubjectKind string `json:"subjectKind,omitempty"`
	SubjectName string `json:"subjectName,omitempty"`
	Path        string `json:"path,omitempty"`
	Message     string `json:"message,omitempty"`
}

// Coverage is how many of the required assertions evidence evaluated.
type Coverage struct {
	Evaluated int `json:"evaluated"`
	Required  int `json:"required"`
}

// Target is one place a service runs (a workload in a scope), with the
// evidence about it. The Builder copies it; a Target handed over must not
// be changed afterwards.
type Target struct {
	Scope string `json:"scope"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// Service is the service name; Domain its domain, derived from the
	// resolved or requested reference when empty.
	Service         string            `json:"service"`
	Domain          string            `json:"domain,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	RequestedRef    string            `json:"requestedRef,omitempty"`
	ResolvedRef     string            `json:"resolvedRef,omitempty"`
	Digest          string            `json:"digest,omitempty"`
	Compliance      Status            `json:"compliance,omitempty"`
	Coverage        *Coverage         `json:"coverage,omitempty"`
	EvidenceAt      time.Time         `json:"evidenceAt,omitzero"`
	ReconciledAt    time.Time         `json:"reconciledAt,omitzero"`
	ObservedRuntime json.RawMessage   `json:"observedRuntime,omitempty"`
	Findings        []Finding         `json:"findings,omitempty"`
	Source          string            `json:"source"`
}

// Key returns the target's identity.
func (t *Target) Key() string { return TargetKey(t.Scope, t.Kind, t.Name) }

// ServiceKey returns the key of the target's service: its domain (given, or
// taken from its reference) and its service name.
func (t *Target) ServiceKey() string {
	d := t.Domain
	if d == "" {
		ref := t.ResolvedRef
		if ref == "" {
			ref = t.RequestedRef
		}
		d = parseRef(ref).domain
	}
	return ServiceKey(d, t.Service)
}

// pinnedDigest is the digest the target runs: given, or pinned in its
// resolved reference.
func (t *Target) pinnedDigest() string {
	if t.Digest != "" {
		return t.Digest
	}
	return parseRef(t.ResolvedRef).digest
}

// tag is the mutable tag the target names, for an inferred link.
func (t *Target) tag() string {
	if tag := parseRef(t.ResolvedRef).tag; tag != "" {
		return tag
	}
	return parseRef(t.RequestedRef).tag
}

// compliance is the target's status, NotEvaluated when unset.
func (t *Target) compliance() Status {
	if t.Compliance == "" {
		return StatusNotEvaluated
	}
	return t.Compliance
}

func (r *Revision) clone() *Revision {
	c := *r
	c.Interfaces = slices.Clone(r.Interfaces)
	c.Capabilities = slices.Clone(r.Capabilities)
	c.Edges = slices.Clone(r.Edges)
	c.Findings = slices.Clone(r.Findings)
	c.OptionalConfigurations = slices.Clone(r.OptionalConfigurations)
	c.Scopes = normScopes(r.Scopes)
	if r.Readiness != nil {
		rd := *r.Readiness
		c.Readiness = &rd
	}
	if r.Valid != nil {
		v := *r.Valid
		c.Valid = &v
	}
	return &c
}

func (t *Target) clone() *Target {
	c := *t
	c.Labels = maps.Clone(t.Labels)
	c.ObservedRuntime = slices.Clone(t.ObservedRuntime)
	c.Findings = slices.Clone(t.Findings)
	if t.Coverage != nil {
		cv := *t.Coverage
		c.Coverage = &cv
	}
	return &c
}

// contentHash is a record's contribution to the snapshot id: a hash of its
// canonical JSON encoding (map keys are sorted by encoding/json).
func contentHash(kind string, v any) [32]byte {
	raw, err := json.Marshal(v)
	if err != nil {
		// Only json.RawMessage could fail, and the fixture decoder
		// already checked it; hash the kind alone rather than panic.
		raw = nil
	}
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(raw)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
