package fleetgraph

import (
	"fmt"
	"maps"
	"slices"
)

// checkInvariants walks the whole snapshot and reports the first place an
// index disagrees with the records. A half-applied batch would break one.
func (s *Snapshot) checkInvariants() error {
	if s.services.len() != s.order.len() {
		return fmt.Errorf("%d services but %d ordered keys", s.services.len(), s.order.len())
	}
	prev := ""
	n := 0
	for k, lower := range s.order.all() {
		if k <= prev && n > 0 {
			return fmt.Errorf("order not sorted at %q", k)
		}
		prev = k
		n++
		if sv := s.service(k); sv == nil {
			return fmt.Errorf("ordered key %q has no service", k)
		} else if sv.lower != lower {
			return fmt.Errorf("ordered key %q has text %q, its service %q", k, lower, sv.lower)
		}
	}
	var acc [32]byte
	revs, tgts := 0, 0
	for k, sv := range s.services.all() {
		if len(sv.revisions)+len(sv.targets) == 0 {
			return fmt.Errorf("service %q is empty", k)
		}
		if keys, _ := s.byName.get(sv.name); !slices.Contains(keys, k) {
			return fmt.Errorf("service %q missing from the name index", k)
		}
		if len(sv.revs) != len(sv.revisions) || len(sv.tgts) != len(sv.targets) {
			return fmt.Errorf("service %q record references are out of step with its keys", k)
		}
		for i, rk := range sv.revisions {
			r := s.revision(rk)
			if r != sv.revs[i] {
				return fmt.Errorf("service %q holds a stale reference to revision %q", k, rk)
			}
			if r == nil || r.ServiceKey() != k {
				return fmt.Errorf("service %q lists revision %q it does not own", k, rk)
			}
		}
		for i, tk := range sv.targets {
			t := s.target(tk)
			if t != sv.tgts[i] {
				return fmt.Errorf("service %q holds a stale reference to target %q", k, tk)
			}
			if t == nil || t.ServiceKey() != k {
				return fmt.Errorf("service %q lists target %q it does not own", k, tk)
			}
		}
		revs += len(sv.revisions)
		tgts += len(sv.targets)
	}
	if revs != s.revisions.len() || tgts != s.targets.len() {
		return fmt.Errorf("services list %d revisions and %d targets, the snapshot holds %d and %d", revs, tgts, s.revisions.len(), s.targets.len())
	}
	for k, e := range s.revisions.all() {
		if e.Key() != k {
			return fmt.Errorf("revision stored under %q has key %q", k, e.Key())
		}
		if keys, _ := s.byDigest.get(e.Digest); !slices.Contains(keys, k) {
			return fmt.Errorf("revision %q missing from the digest index", k)
		}
		xor(&acc, e.hash)
	}
	for k, e := range s.targets.all() {
		if e.Key() != k {
			return fmt.Errorf("target stored under %q has key %q", k, e.Key())
		}
		xor(&acc, e.hash)
	}
	scopes := map[string]int{}
	for k, e := range s.revisions.all() {
		if !slices.Equal(e.Scopes, normScopes(e.Scopes)) {
			return fmt.Errorf("revision %q has scopes %q, not sorted, distinct and non-empty", k, e.Scopes)
		}
		if s.view != "" && !slices.ContainsFunc(e.scopesOrUnscoped(), s.vis.Sees) {
			return fmt.Errorf("view %s holds revision %q of scopes %q it does not see", s.view, k, e.Scopes)
		}
		for _, sc := range e.scopesOrUnscoped() {
			if s.view != "" && !s.vis.Sees(sc) {
				return fmt.Errorf("view %s lists the hidden scope %q on revision %q", s.view, sc, k)
			}
			scopes[sc]++
		}
	}
	for _, e := range s.targets.all() {
		scopes[e.Scope]++
	}
	if !maps.Equal(scopes, s.scopeCount) && len(scopes)+len(s.scopeCount) > 0 {
		return fmt.Errorf("scope counts %v do not match the records' %v", s.scopeCount, scopes)
	}
	if acc != s.acc {
		return fmt.Errorf("record hashes do not add up to the snapshot's")
	}
	// A restricted view answers with the id of the snapshot it restricts.
	if id := snapshotID(observedAcc(acc, s.observedSet()), s.sources, s.limitations, s.freshness); s.view == "" && id != s.id {
		return fmt.Errorf("snapshot id %s does not match its content (%s)", s.id, id)
	}
	if err := s.checkKeyIndexes(); err != nil {
		return err
	}
	if err := s.checkPostings(); err != nil {
		return err
	}
	if err := s.checkInbound(); err != nil {
		return err
	}
	return s.checkAttention()
}

// checkInbound compares the inbound index, which the Builder moves with
// each batch, with the inbound edges found by resolving every candidate
// edge of the snapshot again.
func (s *Snapshot) checkInbound() error {
	for id, refs := range s.inIdx.all(func(refs []inRef) bool { return refs == nil }) {
		if len(refs) == 0 {
			return fmt.Errorf("the inbound index holds an empty list for number %d (want none)", id)
		}
		to := s.serviceAt(id)
		if to == nil {
			return fmt.Errorf("the inbound index lists edges into number %d, which is no service's", id)
		}
		k := to.key
		for _, r := range refs {
			i := r.edge.index()
			if rec, _ := s.revisionEdges(r.rev); rec == nil || rec != r.from || int(i) >= len(rec.Edges) {
				return fmt.Errorf("the inbound index's entry for edge %d of %s into %q reads a record that is not the snapshot's", i, r.rev, k)
			}
			if r.edge.dep() != (r.from.Edges[i].Type == EdgeDependency) {
				return fmt.Errorf("the inbound index's entry for edge %d of %s into %q says dependency %v, but the edge's type is %q", i, r.rev, k, r.edge.dep(), r.from.Edges[i].Type)
			}
			if from := s.serviceAt(r.svc); from == nil || from.key != r.from.ServiceKey() {
				return fmt.Errorf("the inbound index's entry for edge %d of %s into %q names service number %d, which is not the revision's service %q", i, r.rev, k, r.svc, r.from.ServiceKey())
			}
		}
	}
	if err := s.checkIDs(); err != nil {
		return err
	}
	for k, sv := range s.services.all() {
		got, want := s.indexedInbound(sv), scanInbound(s, sv)
		if !slices.Equal(got, want) {
			return fmt.Errorf("the inbound index holds %d edges into %q: %+v; resolving the records finds %d: %+v", len(got), k, got, len(want), want)
		}
	}
	return nil
}

// checkIDs holds the services' numbers to what the walks read them for:
// every service has a number of its own, the table gives each number's
// service (the snapshot's record, not an older copy), and every other
// number below the table's length is free, once.
func (s *Snapshot) checkIDs() error {
	owner := map[svcID]string{}
	for k, sv := range s.services.all() {
		if other, ok := owner[sv.id]; ok {
			return fmt.Errorf("services %q and %q have one number, %d", other, k, sv.id)
		}
		owner[sv.id] = k
		if got := s.serviceAt(sv.id); got != sv {
			return fmt.Errorf("service %q has number %d, but the table holds %v there", k, sv.id, got)
		}
	}
	for _, id := range s.ids.free {
		if k, ok := owner[id]; ok {
			return fmt.Errorf("number %d is free and %q's", id, k)
		}
		owner[id] = ""
		if s.serviceAt(id) != nil {
			return fmt.Errorf("the free number %d names a service in the table", id)
		}
	}
	if len(owner) != s.ids.len() {
		return fmt.Errorf("%d services and %d free numbers, but the table has %d", s.services.len(), len(s.ids.free), s.ids.len())
	}
	for id := range owner {
		if id < 0 || int(id) >= s.ids.len() {
			return fmt.Errorf("number %d is outside the table (%d)", id, s.ids.len())
		}
	}
	return nil
}

// scanInbound finds the resolved edges pointing at sv without the index:
// the edges whose reference or alias names sv's name (depsByName) and
// those pinned to a digest of one of its revisions (pinned), each
// resolved the way the forward direction resolves it, kept if it lands on
// sv.
func scanInbound(s *Snapshot, sv *service) []Relationship {
	keys, _ := s.depsByName.get(sv.name)
	digests := make([]string, 0, len(sv.revs))
	for _, r := range sv.revs {
		if pk, ok := s.pinned.get(r.Digest); ok {
			digests = append(digests, r.Digest)
			keys = append(slices.Clone(keys), pk...)
		}
	}
	if len(digests) > 0 {
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	var out []Relationship
	for _, k := range keys {
		r, targets := s.revisionEdges(k)
		if r == nil {
			continue
		}
		for i, e := range r.Edges {
			t := targets[i]
			if !slices.Contains(t.names(), sv.name) && (t.digest == "" || !slices.Contains(digests, t.digest)) {
				continue
			}
			if rel := s.resolveTarget(r, e, t); rel.Resolved && rel.ToService == sv.key {
				out = append(out, rel)
			}
		}
	}
	return out
}

// checkKeyIndexes rebuilds the name, digest, edge and target-name indexes
// from the records and compares them with the stored ones.
func (s *Snapshot) checkKeyIndexes() error {
	byName, byDigest, deps, pinned, tByName := map[string][]string{}, map[string][]string{}, map[string][]string{}, map[string][]string{}, map[string][]string{}
	for k, sv := range s.services.all() {
		byName[sv.name] = append(byName[sv.name], k)
	}
	for k, e := range s.revisions.all() {
		byDigest[e.Digest] = append(byDigest[e.Digest], k)
		for _, n := range edgeNames(e.Revision) {
			deps[n] = append(deps[n], k)
		}
		for _, d := range pinnedDigests(e.Revision) {
			pinned[d] = append(pinned[d], k)
		}
	}
	for k, e := range s.targets.all() {
		tByName[e.Name] = append(tByName[e.Name], k)
	}
	for _, ix := range []struct {
		name string
		got  pmap[[]string]
		want map[string][]string
	}{{"name", s.byName, byName}, {"digest", s.byDigest, byDigest}, {"edge name", s.depsByName, deps}, {"pinned digest", s.pinned, pinned}, {"target name", s.targetsByName, tByName}} {
		if ix.got.len() != len(ix.want) {
			return fmt.Errorf("the %s index has %d entries, the records make %d", ix.name, ix.got.len(), len(ix.want))
		}
		for k, want := range ix.want {
			slices.Sort(want)
			if got, _ := ix.got.get(k); !slices.Equal(got, want) {
				return fmt.Errorf("the %s index lists %v under %q, the records %v", ix.name, got, k, want)
			}
		}
	}
	return nil
}

// checkPostings rebuilds every search posting list from the records and
// compares it with the stored one.
func (s *Snapshot) checkPostings() error {
	want := map[string][]string{}
	for k, sv := range s.services.all() {
		for _, term := range serviceTerms(sv) {
			want[term] = append(want[term], k)
		}
	}
	for k, e := range s.targets.all() {
		for _, term := range targetTerms(e.Target) {
			want[term] = append(want[term], compositeKey(e.ServiceKey(), k))
		}
	}
	if s.post.len() != len(want) {
		return fmt.Errorf("%d posting lists, the records make %d", s.post.len(), len(want))
	}
	for term, keys := range want {
		slices.Sort(keys)
		l, _ := s.post.get(term)
		var got []string
		for k := range l.all() {
			got = append(got, k)
		}
		if !slices.Equal(got, keys) || l.len() != len(keys) {
			return fmt.Errorf("posting list %q holds %d keys %v, the records %v", term, l.len(), got, keys)
		}
	}
	return nil
}

// checkAttention rebuilds every attention list from the records and the
// snapshot's edge resolution and compares it with the stored one.
func (s *Snapshot) checkAttention() error {
	var want [nAttn]map[string]attn
	for i := range want {
		want[i] = map[string]attn{}
	}
	for k, e := range s.revisions.all() {
		r, sk := e.Revision, e.ServiceKey()
		if r.Valid != nil && !*r.Valid {
			want[attnInvalid][k] = attn{service: sk, reason: revisionFindings(r)}
		}
		if r.Readiness == nil {
			want[attnMissingReadiness][k] = attn{service: sk, reason: "the contract declares no readiness"}
		}
		for i, edge := range r.Edges {
			if rel := s.resolve(r, edge); !rel.Resolved {
				want[attnUnresolved][unresolvedKey(k, edge.Ref, i)] = attn{service: rel.FromService, reason: rel.Reason}
			}
		}
	}
	for k, e := range s.targets.all() {
		t, sk := e.Target, e.ServiceKey()
		switch t.compliance() {
		case StatusNonCompliant:
			want[attnNonCompliant][k] = attn{service: sk, reason: firstFinding(t, "evidence shows the target does not meet its contract")}
		case StatusUnknown:
			want[attnUnknown][k] = attn{service: sk, reason: unknownReason(t)}
		}
		if s.freshness > 0 && !t.EvidenceAt.IsZero() {
			want[attnStale][k] = attn{service: sk, at: t.EvidenceAt}
		}
	}
	for code, list := range s.attention {
		if list.len() != len(want[code]) {
			return fmt.Errorf("attention list %s holds %d items, the records make %d", attnKinds[code].code, list.len(), len(want[code]))
		}
		for k, got := range list.all() {
			if w, ok := want[code][k]; !ok || w != got {
				return fmt.Errorf("attention list %s holds %q as %+v, the records make %+v (listed: %v)", attnKinds[code].code, k, got, w, ok)
			}
		}
	}
	return nil
}
