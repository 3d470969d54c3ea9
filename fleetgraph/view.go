package fleetgraph

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Visibility is the set of scopes (Kubernetes namespaces, for the
// operator) a reader may see. The zero value sees nothing: a reader whose
// visibility was never decided gets an empty fleet, not the whole one.
type Visibility struct {
	all    bool
	scopes []string // sorted, distinct, never ""
	key    string
	// none is what a view that sees no scope says about it (NoScopes).
	none string
}

// AllScopes sees every record, scoped or not.
func AllScopes() Visibility { return Visibility{all: true} }

// OnlyScopes sees the records of the given scopes. Records outside any
// scope (a local directory, an OCI reference) are not among them; empty
// names are ignored.
func OnlyScopes(scopes ...string) Visibility {
	s := slices.Clone(scopes)
	s = slices.DeleteFunc(s, func(x string) bool { return x == "" })
	slices.Sort(s)
	s = slices.Compact(s)
	h := sha256.Sum256([]byte(strings.Join(s, "\x00")))
	return Visibility{scopes: s, key: "v-" + hex.EncodeToString(h[:12])}
}

// NoScopes sees no record at all, and why says so: every answer in its
// view carries a NO_VISIBLE_SCOPE limitation with why as its message (who
// the reader is not allowed to be, and what would let it see something),
// so that an answer showing nothing is never mistaken for an empty fleet.
// Any visibility that sees no scope carries that limitation; one from
// OnlyScopes() or the zero value says it in general words. why must not
// depend on the reader alone: readers with the same why share one view.
func NoScopes(why string) Visibility {
	h := sha256.Sum256([]byte(why))
	return Visibility{none: why, key: "v-none-" + hex.EncodeToString(h[:12])}
}

// seesNothing is the zero Visibility's view key: the same as OnlyScopes().
var seesNothing = OnlyScopes()

// noScopeMessage is NO_VISIBLE_SCOPE's message when the visibility does
// not say why.
const noScopeMessage = "this reader may see none of the scopes in which the fleet has records, so this answer shows nothing: it cannot tell an empty fleet from one it may not see"

// All reports whether v sees everything.
func (v Visibility) All() bool { return v.all }

// Scopes returns the scopes v sees (nil when it sees all).
func (v Visibility) Scopes() []string { return slices.Clone(v.scopes) }

// Sees reports whether v sees a record of scope (its namespace; "" for a
// record outside any).
func (v Visibility) Sees(scope string) bool {
	if v.all {
		return true
	}
	if scope == "" {
		return false
	}
	_, ok := slices.BinarySearch(v.scopes, scope)
	return ok
}

// maxViews bounds the restricted views a snapshot keeps, one per distinct
// visibility (readers with the same namespaces share one).
const maxViews = 64

// viewCache holds a snapshot's restricted views, least recently used
// dropped first. A view is built once, by its first reader; concurrent
// readers of the same visibility wait for it.
type viewCache struct {
	mu   sync.Mutex
	tick uint64
	m    map[string]*viewEntry
}

type viewEntry struct {
	once sync.Once
	snap *Snapshot
	used uint64
	// ready is snap once built, for the Builder to carry it forward;
	// usedAt is when a reader last asked for it.
	ready  atomic.Pointer[Snapshot]
	usedAt atomic.Int64 // unix nanoseconds
}

// viewCarry is how recently a view must have been read for the Builder
// to carry it into the next snapshot (see carryViews).
const viewCarry = 5 * time.Minute

// scopeIndex is what a snapshot knows about its scopes, computed once on
// first use.
type scopeIndex struct {
	once   sync.Once
	scopes []string // distinct scopes of revisions and targets, sorted
	// relevant is scopes plus the scopes of limitations, sorted: the only
	// scopes whose visibility changes what a view shows.
	relevant []string
	// unscoped: some record or subject-bearing limitation has no scope,
	// so only an unrestricted reader sees all of the snapshot.
	unscoped bool
}

// Scopes returns the distinct scopes (namespaces) that hold something in
// the snapshot — a revision, a target or a limitation — sorted: what an
// authorizer asks about, without listing namespaces anywhere else. A
// visibility is only ever compared on these.
func (s *Snapshot) Scopes() []string {
	return slices.Clone(s.scopeIdx().relevant)
}

func (s *Snapshot) scopeIdx() *scopeIndex {
	x := &s.scopes
	x.once.Do(func() {
		for _, l := range s.limitations {
			if l.Subject != "" && l.Scope == "" && !l.ClusterWide {
				x.unscoped = true
			}
		}
		for sc := range s.scopeCount {
			if sc == "" {
				x.unscoped = true
				continue
			}
			x.scopes = append(x.scopes, sc)
		}
		slices.Sort(x.scopes)
		x.relevant = slices.Clone(x.scopes)
		for _, l := range s.limitations {
			if l.Scope != "" {
				x.relevant = append(x.relevant, l.Scope)
			}
		}
		slices.Sort(x.relevant)
		x.relevant = slices.Compact(x.relevant)
	})
	return x
}

// within is v narrowed to the scopes of relevant (sorted) it sees: two
// readers whose visibilities differ only in scopes that hold nothing in
// a snapshot see the same view of it, so they share one.
func (v Visibility) within(relevant []string) Visibility {
	var in []string
	i, j := 0, 0
	for i < len(v.scopes) && j < len(relevant) {
		switch c := strings.Compare(v.scopes[i], relevant[j]); {
		case c == 0:
			in = append(in, v.scopes[i])
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	if len(in) == len(v.scopes) {
		return v
	}
	return OnlyScopes(in...)
}

// Restrict returns the snapshot as a reader with visibility v sees it: a
// view holding only the revisions and targets whose scope v sees, with
// every index, derived service, status, attention list and edge
// resolution computed over them alone, so no query on it can reveal a
// record v does not see — not in totals, cursors, misses and their
// did-you-mean candidates, graph edges, dependents or impact.
//
// What a view shows:
//   - A service exists in it when one of its revisions or targets is
//     visible. A service whose contract is visible but which runs in a
//     hidden scope shows its revisions and no targets there: its target
//     count, status (rolled up from visible targets only, NotEvaluated
//     when none is), sources and owners are the view's own.
//   - A target linked to a revision published in a hidden scope is
//     unlinked in the view; an edge to a service known only through
//     hidden scopes reads as unresolved, exactly as an edge to a service
//     absent from the fleet.
//   - Source states keep their status (a source being down is not about
//     any scope) with counts of visible records only; a limitation is kept
//     when v sees its Scope, or when it has none and names no subject or
//     is ClusterWide.
//   - The view answers with the snapshot's id and asOf, so pins and
//     "a newer snapshot exists" work the same for every reader (a reader
//     can tell that the fleet changed, never what changed where it cannot
//     see). Its cursors are bound to v: replayed by a reader with another
//     visibility they are refused as issued for different filters.
//
// Restricting to everything, or to every scope of a snapshot whose
// records and subject-bearing limitations all have one, returns s itself.
// A visibility counts only the scopes that hold a record or a limitation
// of s: readers who differ in empty namespaces share one view.
// Views are built once per snapshot and visibility and kept with the
// snapshot (at most 64, least recently used dropped first). A view read
// within the last five minutes is carried into the Builder's next
// snapshot by applying the change batch to it, so a reader pays per
// change, not per rebuild (BenchmarkChangeThenQuery).
func (s *Snapshot) Restrict(v Visibility) *Snapshot {
	if v.all {
		return s
	}
	idx := s.scopeIdx()
	if s.view == "" {
		v = v.within(idx.relevant)
		if !idx.unscoped && len(v.scopes) > 0 && len(v.scopes) == len(idx.relevant) {
			return s // v sees every scope there is
		}
	}
	key := v.key
	if key == "" {
		key = seesNothing.key // the zero Visibility
	}
	if s.view != "" {
		key = s.view + "+" + v.key
	}
	c := &s.views
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*viewEntry{}
	}
	c.tick++
	e := c.m[key]
	if e == nil {
		e = &viewEntry{}
		c.m[key] = e
		if len(c.m) > maxViews {
			c.evictLocked(key)
		}
	}
	e.used = c.tick
	c.mu.Unlock()
	e.usedAt.Store(time.Now().UnixNano())
	e.once.Do(func() {
		e.snap = s.buildView(v, key)
		e.ready.Store(e.snap)
	})
	return e.snap
}

// carryViews derives next's views from prev's, for every view a reader
// asked for within viewCarry: the batch that made next from prev is
// applied to the view, filtered by its visibility, so a reader's first
// query after a change costs what the change costs, not a rebuild.
func carryViews(prev, next *Snapshot, batch map[string]change) {
	now := time.Now()
	type carried struct {
		key  string
		view *Snapshot
	}
	var carry []carried
	prev.views.mu.Lock()
	for k, e := range prev.views.m {
		if v := e.ready.Load(); v != nil && now.Sub(time.Unix(0, e.usedAt.Load())) < viewCarry {
			carry = append(carry, carried{k, v})
		}
	}
	prev.views.mu.Unlock()
	if len(carry) == 0 {
		return
	}
	c := &next.views
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*viewEntry{}
	}
	for _, cv := range carry {
		nv := cv.view.advance(next, batch)
		e := &viewEntry{}
		e.once.Do(func() { e.snap = nv })
		e.ready.Store(nv)
		e.usedAt.Store(now.UnixNano())
		c.m[cv.key] = e
	}
}

// evictLocked drops the least recently used view other than keep.
func (c *viewCache) evictLocked(keep string) {
	var oldest string
	var at uint64
	for k, e := range c.m {
		if k != keep && (oldest == "" || e.used < at) {
			oldest, at = k, e.used
		}
	}
	delete(c.m, oldest)
}

// View reports whether the snapshot is a restricted view (Restrict).
func (s *Snapshot) View() bool { return s.view != "" }

// buildView builds the restricted view: the visible records, added to an
// empty snapshot the way the Builder adds them (their content hashes are
// reused), so the view's indexes are exactly those of a fleet that holds
// nothing else.
func (s *Snapshot) buildView(v Visibility, key string) *Snapshot {
	counts := map[string][2]int{}
	a := newApplier(&Snapshot{}, counts, s.freshness > 0)
	if v.seesNoScope() {
		// Nothing to look at: readers who may see nothing (a token with
		// no RBAC, however many) cost no walk over the fleet.
		return s.finishView(a, v, key, counts)
	}
	for _, e := range s.revisions.all() {
		if ve := v.revision(e); ve != nil {
			a.addRevisionEntry(ve)
		}
	}
	for _, e := range s.targets.all() {
		if v.Sees(e.Scope) {
			a.addTargetEntry(e)
		}
	}
	return s.finishView(a, v, key, counts)
}

// seesNoScope reports whether v sees no record at all.
func (v Visibility) seesNoScope() bool { return !v.all && len(v.scopes) == 0 }

// revision is a revision as v sees it: nil when v sees none of its
// scopes, the entry itself when it sees all of them, else a copy listing
// only the scopes v sees (its content hash recomputed), so a view never
// names a namespace its reader may not see.
func (v Visibility) revision(e *revEntry) *revEntry {
	if v.all {
		return e
	}
	seen := 0
	for _, sc := range e.Scopes {
		if v.Sees(sc) {
			seen++
		}
	}
	switch seen {
	case 0:
		return nil
	case len(e.Scopes):
		return e
	}
	r := *e.Revision
	r.Scopes = slices.DeleteFunc(slices.Clone(e.Scopes), func(sc string) bool { return !v.Sees(sc) })
	return &revEntry{Revision: &r, hash: contentHash("revision", &r), targets: e.targets}
}

// advance is the view s of the previous snapshot moved to next: every
// record the batch touched is taken out of the view and put back as next
// holds it, when the view sees its scope (a record that moved to a hidden
// scope leaves the view; one deleted stays out).
func (s *Snapshot) advance(next *Snapshot, batch map[string]change) *Snapshot {
	counts := maps.Clone(s.counts)
	a := newApplier(s, counts, s.freshness > 0)
	for k, c := range batch {
		key := k[1:]
		switch c.kind {
		case upsertRevision, deleteRevision:
			a.removeRevision(key)
			if e, ok := next.revisions.get(key); ok {
				if ve := s.vis.revision(e); ve != nil {
					a.addRevisionEntry(ve)
				}
			}
		case upsertTarget, deleteTarget:
			a.removeTarget(key)
			if e, ok := next.targets.get(key); ok && s.vis.Sees(e.Scope) {
				a.addTargetEntry(e)
			}
		}
	}
	return next.finishView(a, s.vis, s.view, counts)
}

// finishView commits a view's applier into a snapshot that answers as s.
func (s *Snapshot) finishView(a *applier, v Visibility, key string, counts map[string][2]int) *Snapshot {
	a.finishServices()
	a.commitPostings()
	next := &Snapshot{
		id: s.id, asOf: s.asOf, seq: s.seq, freshness: s.freshness, view: key, vis: v, counts: counts,
		revisions: a.revs.commit(), targets: a.tgts.commit(), services: a.svcs.commit(), ids: a.ids.commit(), order: a.order.commit(),
		byName: a.byName.commit(), byDigest: a.byDigest.commit(), depsByName: a.deps.commit(), targetsByName: a.tByName.commit(),
		pinned: a.pinned.commit(), post: a.post.commit(), acc: a.acc, scopeCount: a.scopeCount,
		obs: newObservedState(s.observedSet()), diffs: s.diffs,
	}
	a.recheckEdges(next)
	for i, tx := range a.attn {
		next.attention[i] = tx.commit()
	}
	next.sources = cloneSources(s.sources)
	for i := range next.sources {
		c := counts[next.sources[i].ID]
		next.sources[i].RevisionCount, next.sources[i].TargetCount = c[0], c[1]
	}
	for _, l := range s.limitations {
		if l.visibleTo(v) {
			next.limitations = append(next.limitations, l)
		}
	}
	next.completeness = s.completeness
	// An answer that shows nothing is partial, as one with no source
	// configured is: absence of a record proves nothing. (A view of a
	// view that saw nothing keeps the first one's limitation.)
	seesNothing := slices.ContainsFunc(next.limitations, func(l Limitation) bool { return l.Code == LimitNoVisibleScope })
	if !seesNothing && v.seesNoScope() {
		next.limitations = append(next.limitations, Limitation{Code: LimitNoVisibleScope, Message: cmp.Or(v.none, noScopeMessage)})
		seesNothing = true
	}
	if seesNothing {
		next.completeness = CompletenessPartial
	}
	if next.completeness != CompletenessPartial {
		next.completeness = CompletenessComplete
		if next.revisions.len()+next.targets.len() == 0 {
			next.completeness = CompletenessEmpty
		}
	}
	return next
}

// filterKey is the hash a cursor carries for a query's filters: bound to
// the view too, so a cursor issued to one visibility is refused in
// another's.
func (s *Snapshot) filterKey(q any) string {
	if s.view == "" {
		return filterHash(q)
	}
	return filterHash(struct {
		Q    any
		View string
	}{q, s.view})
}
