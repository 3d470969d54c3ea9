package fleetgraph

import (
	"time"
)

// Snapshot is one immutable version of the fleet. Every method is safe for
// concurrent use and answers from this version only; nothing on a Snapshot
// changes after the Builder publishes it. Answers are fresh copies.
type Snapshot struct {
	id        string
	asOf      time.Time
	seq       uint64 // publication order, not part of the identity
	freshness time.Duration

	// Records, each stored once and shared with later snapshots until it
	// changes. Values are never mutated.
	revisions pmap[*revEntry]
	targets   pmap[*tgtEntry]
	services  pmap[*service]
	// ids is the services again, by number (ids.go): what a walk over
	// inbound edges reads, since each entry names its declaring service
	// by number.
	ids svcTable
	// order maps service keys, in order, to their lower-cased name and
	// owners: paging walks it, and a text search scans it without
	// visiting the services.
	order sorted[string]

	// Indexes, maintained incrementally by the Builder.
	byName        pmap[[]string] // service name -> service keys
	byDigest      pmap[[]string] // revision digest -> revision keys
	depsByName    pmap[[]string] // name an edge may resolve by (reference or alias) -> revision keys declaring it
	targetsByName pmap[[]string] // target name -> target keys
	pinned        pmap[[]string] // digest an edge pins -> revision keys declaring it
	// inIdx is the inbound index: service number -> the resolved edges
	// pointing at the service, sorted (inbound.go). The Builder moves it
	// with each batch, for the revisions whose edges' resolution the batch
	// may have changed, so a first dependents or impact walk on a new
	// snapshot reads it instead of resolving the fleet's edges; by number,
	// so a walk that has the service's number reads its list without
	// hashing its key.
	inIdx numbered[[]inRef]
	post  postings // search term -> service or target composite keys (index.go)
	// attention holds what pacto_fleet_status lists, one sorted list per
	// code, computed when records change rather than per query. Stale
	// evidence depends on asOf, so its list holds every target with
	// evidence and its time, and a query compares them with asOf.
	attention [nAttn]sorted[attn]

	// diffs is the Builder's cache of impact's diffs, shared by all its
	// snapshots and their views (diffcache.go); nil computes each diff.
	diffs *diffCache

	// obs is the observed (traced) edges and their memos; nil when no
	// observed-edge source is configured (observed.go).
	obs *observedState

	sources      []SourceState // sorted by id
	limitations  []Limitation
	completeness string
	acc          [32]byte // XOR of every record's content hash
	// scopeCount is how many revisions and targets each scope holds (""
	// for records outside any), maintained by the Builder: Scopes and
	// Restrict read it instead of walking the records.
	scopeCount map[string]int

	// view is empty for the Builder's snapshots, and names the visibility
	// of a restricted view (view.go). views caches the restricted views of
	// this snapshot and scopes its scope list: both are memos, filled on
	// first use; the records and indexes above never change.
	view   string
	views  viewCache
	scopes scopeIndex
	// in memoizes inbound (query.go), also filled on first use; impacts
	// keeps the last impact walks (impact.go).
	in      inboundMemo
	impacts impactMemo
	// vis and counts are a view's visibility and per-source record
	// counts, kept to advance the view to the next snapshot.
	vis    Visibility
	counts map[string][2]int
}

// revEntry and tgtEntry pair a record with its content hash, so a change
// can take the old record's contribution out of the snapshot id.
type revEntry struct {
	*Revision
	hash [32]byte
	// targets are what the revision's edges point at, parsed once when
	// the revision enters the Builder: a view built from the entry, and
	// every batch that rechecks its edges, reads them without parsing the
	// references again.
	targets []edgeTarget
}

// newRevEntry is the entry of a revision whose content hash is known.
func newRevEntry(r *Revision, hash [32]byte) *revEntry {
	e := &revEntry{Revision: r, hash: hash, targets: make([]edgeTarget, len(r.Edges))}
	for i, edge := range r.Edges {
		e.targets[i] = edge.target()
	}
	return e
}

type tgtEntry struct {
	*Target
	hash [32]byte
}

// service is derived from revisions and targets; no source emits one.
type service struct {
	key, domain, name string
	id                svcID    // kept for the service's life (ids.go)
	revisions         []string // sorted revision keys
	targets           []string // sorted target keys
	owners            []string // distinct owners of its revisions, sorted
	status            Status
	sources           []string // sorted source ids
	// Direct references to the records, parallel to revisions and targets:
	// a filter over a service's targets follows pointers instead of
	// hashing 30,000 keys (8 bytes a record). lower is the lower-cased
	// name and owners, for text search.
	revs  []*Revision
	tgts  []*Target
	lower string
}

// ID is the snapshot's deterministic identity: a hash over its records,
// its sources' states and its freshness window, independent of the order
// changes arrived in.
func (s *Snapshot) ID() string { return s.id }

// AsOf is when the snapshot was published; staleness is judged against it.
func (s *Snapshot) AsOf() time.Time { return s.asOf }

// Seq is the publication sequence number: a later snapshot has a larger one.
func (s *Snapshot) Seq() uint64 { return s.seq }

// Counts returns how many services, revisions and targets the snapshot holds.
func (s *Snapshot) Counts() (services, revisions, targets int) {
	return s.services.len(), s.revisions.len(), s.targets.len()
}

// Sources returns the sources' states, sorted by id.
func (s *Snapshot) Sources() []SourceState { return cloneSources(s.sources) }

// Meta returns the envelope of an answer that adds no limitation of its own.
func (s *Snapshot) Meta() Meta { return s.meta(nil) }

func (s *Snapshot) service(key string) *service {
	sv, _ := s.services.get(key)
	return sv
}

// serviceAt is the service numbered id (ids.go).
func (s *Snapshot) serviceAt(id svcID) *service { return s.ids.at(id) }

// inboundOf is the inbound-index list of the service key.
func (s *Snapshot) inboundOf(key string) []inRef {
	if sv := s.service(key); sv != nil {
		return s.inIdx.at(sv.id)
	}
	return nil
}

func (s *Snapshot) revision(key string) *Revision {
	if e, ok := s.revisions.get(key); ok {
		return e.Revision
	}
	return nil
}

// revisionEdges is a revision with what its edges point at, parsed when
// it entered the Builder (targets[i] is Edges[i]'s): a walk over edges
// resolves them without parsing a reference per edge and call.
func (s *Snapshot) revisionEdges(key string) (*Revision, []edgeTarget) {
	if e, ok := s.revisions.get(key); ok {
		return e.Revision, e.targets
	}
	return nil, nil
}

func (s *Snapshot) target(key string) *Target {
	if e, ok := s.targets.get(key); ok {
		return e.Target
	}
	return nil
}

// stale reports whether a target's evidence is older than the freshness
// window at the snapshot's asOf.
func (s *Snapshot) stale(t *Target) bool {
	return s.freshness > 0 && !t.EvidenceAt.IsZero() && s.asOf.Sub(t.EvidenceAt) > s.freshness
}

// link ties a target to a revision: exact by digest, else inferred from a
// unique revision whose version is the target's tag. A target whose digest
// contradicts its own pinned reference links to neither.
func (s *Snapshot) link(t *Target) (revKey string, state LinkState, reason string) {
	sk := t.ServiceKey()
	if pinned := parseRef(t.ResolvedRef).digest; t.Digest != "" && pinned != "" && pinned != t.Digest {
		return "", LinkUnresolved, LimitTargetRefConflict + ": the target's digest " + t.Digest + " contradicts the digest " + pinned + " pinned in its resolved reference"
	}
	if d := t.pinnedDigest(); d != "" {
		keys, _ := s.byDigest.get(d)
		var other string
		for _, k := range keys {
			if r := s.revision(k); r != nil {
				if r.ServiceKey() == sk {
					return k, LinkExact, ""
				}
				other = r.ServiceKey()
			}
		}
		if other != "" {
			return "", LinkUnresolved, LimitTargetRefConflict + ": digest " + d + " is a revision of service " + other + ", not " + sk
		}
		return "", LinkUnresolved, "no revision of " + sk + " has digest " + d
	}
	tag := t.tag()
	if tag == "" {
		return "", LinkUnresolved, "the target names neither a digest nor a tag"
	}
	sv := s.service(sk)
	if sv == nil {
		return "", LinkUnresolved, "no contract revision of service " + sk + " is in the snapshot"
	}
	var match []string
	for _, k := range sv.revisions {
		if r := s.revision(k); r != nil && r.Version == versionOfTag(tag) {
			match = append(match, k)
		}
	}
	switch len(match) {
	case 1:
		return match[0], LinkInferred, ""
	case 0:
		return "", LinkUnresolved, "no revision of " + sk + " has version " + versionOfTag(tag)
	default:
		return "", LinkAmbiguous, LimitLinkAmbiguous + ": version " + versionOfTag(tag) + " matches " + joinKeys(match)
	}
}

// resolve resolves a declared edge against the snapshot: a pinned digest
// first (the revision of the service the reference names, else the only
// service holding that digest), then the service the reference names (its
// key, else a unique service with its name), and only when the reference
// names no service a dependency's alias the same way.
func (s *Snapshot) resolve(from *Revision, e Edge) Relationship {
	return s.resolveTarget(from, e, e.target())
}

// resolveTarget is resolve with the edge's target already parsed.
func (s *Snapshot) resolveTarget(from *Revision, e Edge, t edgeTarget) Relationship {
	return s.resolveFrom(from.ServiceKey(), from.Key(), e, t)
}

// resolveFrom is resolveTarget with the declaring revision's service and
// revision keys made already: a loop over a revision's edges makes them
// once, not once an edge.
func (s *Snapshot) resolveFrom(fromService, fromRevision string, e Edge, t edgeTarget) Relationship {
	rel := Relationship{
		FromService:   fromService,
		FromRevision:  fromRevision,
		To:            e.Ref,
		Type:          e.Type,
		Provenance:    "declared",
		Required:      e.Required,
		Compatibility: e.Compatibility,
		Name:          e.Name,
	}
	key := t.key
	if t.digest != "" {
		// One bundle mirrored into two repositories is two services with
		// one digest: the reference's own service wins, and a digest held
		// by several other services does not pick one of them.
		var only, onlyKey string
		services := 0
		keys, _ := s.byDigest.get(t.digest)
		for _, k := range keys {
			r := s.revision(k)
			if r == nil {
				continue
			}
			if sk := r.ServiceKey(); sk == key {
				rel.Resolved, rel.ToService, rel.ResolvedRevision = true, sk, k
				return rel
			} else if sk != only {
				only, onlyKey = sk, k
				services++
			}
		}
		if services == 1 {
			rel.Resolved, rel.ToService, rel.ResolvedRevision = true, only, onlyKey
			return rel
		}
	}
	name := t.name
	to, ambiguous := s.serviceNamedKey(key, name)
	if to == "" && len(ambiguous) == 0 && t.alias != "" {
		name = t.alias
		to, ambiguous = s.serviceNamed(t.domain, name)
	}
	switch {
	case to != "":
		rel.Resolved, rel.ToService = true, to
	case len(ambiguous) > 0:
		rel.Reason = "the name " + name + " is ambiguous: " + joinKeys(ambiguous)
	case t.alias != "":
		rel.Reason = "no service named " + t.name + " (the reference) or " + t.alias + " (the dependency's name) is in the snapshot"
	default:
		rel.Reason = "no service named " + t.name + " is in the snapshot"
	}
	return rel
}

// serviceNamed finds the service a domain and a name identify: the key
// they make, else the only service with that name in any domain. Several
// services with the name are returned as ambiguous.
func (s *Snapshot) serviceNamed(domain, name string) (key string, ambiguous []string) {
	return s.serviceNamedKey(ServiceKey(domain, name), name)
}

// serviceNamedKey is serviceNamed with the key the domain and name make.
func (s *Snapshot) serviceNamedKey(k, name string) (key string, ambiguous []string) {
	if name == "" {
		return "", nil
	}
	if s.service(k) != nil {
		return k, nil
	}
	keys, _ := s.byName.get(name)
	switch len(keys) {
	case 0:
		return "", nil
	case 1:
		return keys[0], nil
	default:
		return "", keys
	}
}

func joinKeys(keys []string) string {
	const most = 5
	out := ""
	for i, k := range keys {
		if i == most {
			return out + ", …"
		}
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}
