package fleetgraph

import (
	"cmp"
	"slices"
	"strings"
)

// inRef is one resolved edge as the inbound index holds it: the declaring
// revision's key and record, its service's number, the edge's place in
// its contract and, for an edge resolved by a pinned digest, the revision
// it resolved to. 48 bytes an edge; the strings share the revision keys'
// bytes.
//
// from is the record the batch that indexed the edge read. Every batch
// that sets a revision rechecks it (addRevisionEntry), which takes its
// entries out and puts them back with the new record, so from is always
// the snapshot's own record for rev: a walk reads the edge through it
// instead of looking the revision up by key (checkInbound holds it to
// that). svc stays right for as long as the entry does: a service keeps
// its number while it has a revision, and the entry goes with the
// revision.
type inRef struct {
	rev         string
	resolvedRev string
	from        *Revision
	edge        edgePlace
	svc         svcID
}

// edgePlace is an edge's place in its contract and whether it is a
// dependency (Type EdgeDependency), in one word: place<<1, plus one for a
// dependency. The walks over dependents test the kind for every edge
// they pass, so it is kept in the entry rather than read through from,
// and in the place's word so that the entry stays 48 bytes.
type edgePlace uint32

func newEdgePlace(i int, dep bool) edgePlace {
	p := edgePlace(i) << 1
	if dep {
		p |= 1
	}
	return p
}

func (p edgePlace) index() int32 { return int32(p >> 1) }
func (p edgePlace) dep() bool    { return p&1 != 0 }

// inKey is what identifies an inRef: its edge and where it resolved, not
// the record it was read through.
type inKey struct {
	rev         string
	edge        int32
	resolvedRev string
}

func (r *inRef) key() inKey {
	return inKey{rev: r.rev, edge: r.edge.index(), resolvedRev: r.resolvedRev}
}

// fromKey is the declaring service's key.
func (r *inRef) fromKey() string { return fromService(r.rev, r.from) }

// edgeOf is the edge itself, in the declaring revision's contract.
func (r *inRef) edgeOf() *Edge { return &r.from.Edges[r.edge.index()] }

func compareInRef(a, b inRef) int {
	return cmp.Or(strings.Compare(a.rev, b.rev), cmp.Compare(a.edge, b.edge))
}

// inboundEdits collects one batch's changes to the inbound index, per
// service the edges point at, so that a hub's list is rebuilt once per
// batch however many of its dependents change (the first snapshot of a
// fleet adds every edge in one batch).
type inboundEdits struct {
	add map[string][]inRef
	del map[string]map[inKey]bool
}

// unindexInbound starts moving the inbound index from a's previous
// snapshot to the next one: it takes out the entries of every revision
// whose edges' resolution the batch may have changed (those it removed
// or replaced, and those recheckEdges rechecks), found by resolving the
// old revision against the previous snapshot, which is how they were
// made. recheckEdges adds the rechecked revisions' edges as they resolve
// now. An edge of any other revision resolves in the next snapshot as it
// did before, so its entry stands.
func (a *applier) unindexInbound() inboundEdits {
	ed := inboundEdits{add: map[string][]inRef{}, del: map[string]map[inKey]bool{}}
	unindex := func(k string) {
		old, ok := a.prev.revisions.get(k)
		if !ok {
			return
		}
		from := old.ServiceKey()
		for i, e := range old.Edges {
			if rel := a.prev.resolveFrom(from, k, e, old.targets[i]); rel.Resolved {
				d := ed.del[rel.ToService]
				if d == nil {
					d = map[inKey]bool{}
					ed.del[rel.ToService] = d
				}
				d[inKey{rev: k, edge: int32(i), resolvedRev: rel.ResolvedRevision}] = true
			}
		}
	}
	for k := range a.recheck {
		unindex(k)
	}
	for k := range a.removed {
		if !a.recheck[k] {
			unindex(k)
		}
	}
	return ed
}

// apply makes the edits to tx, next's inbound index: each service's list
// rebuilt once. A service next does not hold went in this batch, and its
// list with its number (finishServices).
func (ed inboundEdits) apply(tx *numberedTx[[]inRef], next *Snapshot) {
	rebuild := func(to string) {
		sv := next.service(to)
		if sv == nil {
			return
		}
		old := tx.at(sv.id)
		del := ed.del[to]
		out := make([]inRef, 0, len(old)+len(ed.add[to]))
		for i := range old {
			if !del[old[i].key()] {
				out = append(out, old[i])
			}
		}
		out = append(out, ed.add[to]...)
		// Stable, and the last of equal keys kept: an entry this batch
		// added carries the record the batch has.
		slices.SortStableFunc(out, compareInRef)
		out = compactLast(out)
		if len(out) == 0 {
			out = nil
		}
		tx.put(sv.id, slices.Clip(out))
	}
	for to := range ed.del {
		rebuild(to)
	}
	for to := range ed.add {
		if _, done := ed.del[to]; !done {
			rebuild(to)
		}
	}
}

// compactLast drops, from a sorted list, every entry followed by one with
// the same key.
func compactLast(rs []inRef) []inRef {
	out := rs[:0]
	for i := range rs {
		if i+1 < len(rs) && rs[i].key() == rs[i+1].key() {
			continue
		}
		out = append(out, rs[i])
	}
	return out
}

// indexedInbound is the resolved edges pointing at sv, from the inbound
// index, sorted by revision and then by the edge's place in its contract.
func (s *Snapshot) indexedInbound(sv *service) []Relationship {
	refs := s.inIdx.at(sv.id)
	if len(refs) == 0 {
		return nil
	}
	out := make([]Relationship, 0, len(refs))
	for i := range refs {
		r := &refs[i]
		from := r.from
		e := from.Edges[r.edge.index()]
		out = append(out, Relationship{
			FromService: r.fromKey(), FromRevision: r.rev, To: e.Ref, Type: e.Type, Provenance: "declared",
			Required: e.Required, Compatibility: e.Compatibility, Name: e.Name,
			Resolved: true, ToService: sv.key, ResolvedRevision: r.resolvedRev,
		})
	}
	return out
}

// fromService is from's service key, the front of its revision key rev
// (RevisionKey: the service key, "@", the digest) when rev is that, so
// the key shares rev's bytes instead of being escaped and joined again.
func fromService(rev string, from *Revision) string {
	if n := len(rev) - len(from.Digest) - 1; n >= 0 && rev[n] == '@' && rev[n+1:] == from.Digest {
		return rev[:n]
	}
	return from.ServiceKey()
}
