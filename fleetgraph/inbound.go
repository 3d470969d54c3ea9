package fleetgraph

import (
	"cmp"
	"slices"
	"strings"
)

// inRef is one resolved edge as the inbound index holds it: the declaring
// revision, the edge's place in its contract and, for an edge resolved by
// a pinned digest, the revision it resolved to. 40 bytes an edge; the
// strings share the revision keys' bytes.
type inRef struct {
	rev         string
	edge        int32
	resolvedRev string
}

func compareInRef(a, b inRef) int {
	return cmp.Or(strings.Compare(a.rev, b.rev), cmp.Compare(a.edge, b.edge))
}

// inboundEdits collects one batch's changes to the inbound index, per
// service the edges point at, so that a hub's list is rebuilt once per
// batch however many of its dependents change (the first snapshot of a
// fleet adds every edge in one batch).
type inboundEdits struct {
	add map[string][]inRef
	del map[string]map[inRef]bool
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
	ed := inboundEdits{add: map[string][]inRef{}, del: map[string]map[inRef]bool{}}
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
					d = map[inRef]bool{}
					ed.del[rel.ToService] = d
				}
				d[inRef{rev: k, edge: int32(i), resolvedRev: rel.ResolvedRevision}] = true
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

// apply is idx with the edits: each service's list rebuilt once.
func (ed inboundEdits) apply(idx pmap[[]inRef]) pmap[[]inRef] {
	if len(ed.add) == 0 && len(ed.del) == 0 {
		return idx
	}
	tx := idx.edit()
	rebuild := func(to string) {
		old, _ := tx.get(to)
		del := ed.del[to]
		out := make([]inRef, 0, len(old)+len(ed.add[to]))
		for _, r := range old {
			if !del[r] {
				out = append(out, r)
			}
		}
		out = append(out, ed.add[to]...)
		slices.SortFunc(out, compareInRef)
		out = slices.CompactFunc(out, func(x, y inRef) bool { return x == y })
		if len(out) == 0 {
			tx.del(to)
		} else {
			tx.set(to, slices.Clip(out))
		}
	}
	for to := range ed.del {
		rebuild(to)
	}
	for to := range ed.add {
		if _, done := ed.del[to]; !done {
			rebuild(to)
		}
	}
	return tx.commit()
}

// indexedInbound is the resolved edges pointing at sv, from the inbound
// index, sorted by revision and then by the edge's place in its contract.
func (s *Snapshot) indexedInbound(sv *service) []Relationship {
	refs, _ := s.inIdx.get(sv.key)
	if len(refs) == 0 {
		return nil
	}
	out := make([]Relationship, 0, len(refs))
	for _, r := range refs {
		from, _ := s.revisionEdges(r.rev)
		if from == nil || int(r.edge) >= len(from.Edges) {
			continue // cannot happen: the index moves with the records
		}
		e := from.Edges[r.edge]
		out = append(out, Relationship{
			FromService: fromService(r.rev, from), FromRevision: r.rev, To: e.Ref, Type: e.Type, Provenance: "declared",
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
