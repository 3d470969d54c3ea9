package fleetgraph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Builder defaults.
const (
	DefaultDebounce  = 100 * time.Millisecond
	DefaultMaxBatch  = 4096
	DefaultRetention = 10 * time.Minute
	defaultHistory   = 64
)

// BuilderOptions configure a Builder; nil or zero fields mean defaults.
type BuilderOptions struct {
	// Clock stamps each snapshot's asOf (default time.Now).
	Clock func() time.Time
	// Debounce is how long Run waits after a change for more before it
	// publishes (default 100ms).
	Debounce time.Duration
	// MaxBatch publishes at once when this many changes are pending
	// (default 4096).
	MaxBatch int
	// Freshness marks target evidence older than this stale; zero never.
	Freshness time.Duration
	// Retention is how long a replaced snapshot stays reachable through
	// Lookup, for pinned readers (default 10m; at most 64 are kept).
	Retention time.Duration
}

type changeKind int

const (
	upsertRevision changeKind = iota
	deleteRevision
	upsertTarget
	deleteTarget
)

type change struct {
	kind changeKind
	rev  *Revision
	tgt  *Target
}

// Builder turns a stream of changes — the upserts and deletes an informer
// or a source produces — into published snapshots. Changes are coalesced
// per record (the last one wins) and applied in one batch; the result is
// published by swapping an atomic pointer, so readers never wait and never
// see a half-built snapshot. It is safe for concurrent use.
type Builder struct {
	opts BuilderOptions
	cur  atomic.Pointer[Snapshot]

	mu      sync.Mutex
	pending map[string]change // "r"/"t" + record key -> last change
	sources map[string]SourceState
	srcLims map[string][]Limitation
	srcDone bool // sources changed since the last publish
	counts  map[string][2]int
	seq     uint64
	history []retained
	// applied is closed, and replaced, each time Flush applies a batch
	// (whether or not it changed the snapshot); appliedAt is when. A feed
	// measures its lag with them.
	applied   chan struct{}
	appliedAt time.Time

	kick chan struct{}

	// observed is the observed-edge set the next snapshot carries
	// (observed.go). Guarded by mu.
	observed *Observed
	// diffs is impact's diff cache, handed to every snapshot.
	diffs *diffCache
}

type retained struct {
	snap       *Snapshot
	replacedAt time.Time
}

// NewBuilder returns a Builder that has published an empty snapshot.
func NewBuilder(opts *BuilderOptions) *Builder {
	b := &Builder{pending: map[string]change{}, sources: map[string]SourceState{}, srcLims: map[string][]Limitation{}, counts: map[string][2]int{}, kick: make(chan struct{}, 1), applied: make(chan struct{}), diffs: &diffCache{}}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.Clock == nil {
		b.opts.Clock = time.Now
	}
	if b.opts.Debounce <= 0 {
		b.opts.Debounce = DefaultDebounce
	}
	if b.opts.MaxBatch <= 0 {
		b.opts.MaxBatch = DefaultMaxBatch
	}
	if b.opts.Retention <= 0 {
		b.opts.Retention = DefaultRetention
	}
	empty := &Snapshot{freshness: b.opts.Freshness, asOf: b.opts.Clock().UTC(), diffs: b.diffs}
	empty.completeness, empty.limitations = sourceLimitations(nil, 0)
	empty.id = snapshotID(empty.acc, nil, empty.limitations, b.opts.Freshness)
	b.cur.Store(empty)
	return b
}

// Current returns the latest published snapshot.
func (b *Builder) Current() *Snapshot { return b.cur.Load() }

// Lookup returns the current snapshot or a recently replaced one by id.
func (b *Builder) Lookup(id string) (*Snapshot, bool) {
	if s := b.cur.Load(); s.id == id {
		return s, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire()
	for i := len(b.history) - 1; i >= 0; i-- {
		if b.history[i].snap.id == id {
			return b.history[i].snap, true
		}
	}
	return nil, false
}

// ErrInvalidRecord is wrapped by upserts of a record without identity.
var ErrInvalidRecord = errors.New("invalid fleet record")

// UpsertRevision queues a revision to add or replace.
func (b *Builder) UpsertRevision(r *Revision) error {
	if r == nil || r.Name == "" || r.Digest == "" {
		return fmt.Errorf("%w: a revision needs a service name and a digest (%s)", ErrInvalidRecord, LimitIdentityUnresolved)
	}
	r = r.clone()
	b.queue("r"+r.Key(), change{kind: upsertRevision, rev: r})
	return nil
}

// DeleteRevision queues the removal of a revision by key.
func (b *Builder) DeleteRevision(key string) {
	b.queue("r"+key, change{kind: deleteRevision, rev: &Revision{Digest: key}})
}

// UpsertTarget queues a target to add or replace.
func (b *Builder) UpsertTarget(t *Target) error {
	if t == nil || t.Name == "" || t.Service == "" {
		return fmt.Errorf("%w: a target needs a name and a service", ErrInvalidRecord)
	}
	if t.Compliance != "" && !t.Compliance.Valid() {
		return fmt.Errorf("%w: compliance %q is not one of %v", ErrInvalidRecord, t.Compliance, Statuses())
	}
	t = t.clone()
	b.queue("t"+t.Key(), change{kind: upsertTarget, tgt: t})
	return nil
}

// DeleteTarget queues the removal of a target by key.
func (b *Builder) DeleteTarget(key string) {
	b.queue("t"+key, change{kind: deleteTarget, tgt: &Target{Name: key}})
}

// SetSource records a source's state and the limitations it reported
// (they replace earlier ones); its counts are the Builder's own.
func (b *Builder) SetSource(st SourceState, lims ...Limitation) {
	b.mu.Lock()
	b.sources[st.ID] = st.clone()
	b.srcLims[st.ID] = slices.Clone(lims)
	b.srcDone = true
	b.mu.Unlock()
	b.signal()
}

func (b *Builder) queue(key string, c change) {
	b.mu.Lock()
	b.pending[key] = c
	b.mu.Unlock()
	b.signal()
}

func (b *Builder) signal() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// Applied returns when Flush last applied a batch of changes (zero before
// the first) and a channel closed when it next does. Every change queued
// before that time is in the current snapshot, or was found to change
// nothing.
func (b *Builder) Applied() (time.Time, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.appliedAt, b.applied
}

// Pending returns how many coalesced changes wait for the next publish.
func (b *Builder) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// Run publishes queued changes until ctx is done: after a change it waits
// Debounce for more (publishing at once when MaxBatch are pending), then
// applies them all as one snapshot.
func (b *Builder) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			b.Flush()
			return nil
		case <-b.kick:
		}
		timer := time.NewTimer(b.opts.Debounce)
	wait:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				b.Flush()
				return nil
			case <-timer.C:
				break wait
			case <-b.kick:
				if b.Pending() >= b.opts.MaxBatch {
					timer.Stop()
					break wait
				}
			}
		}
		b.Flush()
	}
}

// Flush applies every pending change now and returns the published
// snapshot. When nothing changed the current snapshot stays.
func (b *Builder) Flush() *Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := b.cur.Load()
	if len(b.pending) == 0 && !b.srcDone {
		return prev
	}
	batch := b.pending
	b.pending = map[string]change{}
	b.srcDone = false
	next := b.apply(prev, batch)
	b.appliedAt = next.asOf
	close(b.applied)
	b.applied = make(chan struct{})
	if next.id == prev.id {
		return prev
	}
	carryViews(prev, next, batch)
	now := b.opts.Clock().UTC()
	b.history = append(b.history, retained{snap: prev, replacedAt: now})
	b.expire()
	b.cur.Store(next)
	return next
}

// expire drops replaced snapshots past their retention. Caller holds mu.
func (b *Builder) expire() {
	now := b.opts.Clock()
	drop := 0
	for drop < len(b.history) && (now.Sub(b.history[drop].replacedAt) > b.opts.Retention || len(b.history)-drop > defaultHistory) {
		drop++
	}
	if drop > 0 {
		b.history = slices.Delete(b.history, 0, drop)
	}
}

// apply builds the next snapshot from prev and a batch. Untouched shards,
// chunks, records and index entries are shared with prev. Caller holds mu.
func (b *Builder) apply(prev *Snapshot, batch map[string]change) *Snapshot {
	a := newApplier(prev, b.counts, b.opts.Freshness > 0)
	keys := make([]string, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the result does not depend on it; logs and tests like a stable order
	for _, k := range keys {
		c := batch[k]
		switch c.kind {
		case upsertRevision:
			a.removeRevision(c.rev.Key())
			a.addRevision(c.rev)
		case deleteRevision:
			a.removeRevision(c.rev.Digest)
		case upsertTarget:
			a.removeTarget(c.tgt.Key())
			a.addTarget(c.tgt)
		case deleteTarget:
			a.removeTarget(c.tgt.Name)
		}
	}
	a.finishServices()
	a.commitPostings()

	b.seq++
	next := &Snapshot{
		asOf:      b.opts.Clock().UTC(),
		seq:       b.seq,
		freshness: b.opts.Freshness,
		revisions: a.revs.commit(), targets: a.tgts.commit(), services: a.svcs.commit(), ids: a.ids.commit(), order: a.order.commit(),
		byName: a.byName.commit(), byDigest: a.byDigest.commit(), depsByName: a.deps.commit(), targetsByName: a.tByName.commit(),
		pinned: a.pinned.commit(), post: a.post.commit(),
		acc: a.acc, scopeCount: a.scopeCount, diffs: b.diffs,
	}
	// Edge resolution reads the whole next snapshot, so the unresolved
	// edges are rechecked once its records and indexes are final.
	a.recheckEdges(next)
	for i, tx := range a.attn {
		next.attention[i] = tx.commit()
	}
	next.sources = b.sourceStates(next.asOf)
	next.completeness, next.limitations = sourceLimitations(next.sources, next.revisions.len()+next.targets.len())
	for _, st := range next.sources {
		next.limitations = append(next.limitations, b.srcLims[st.ID]...)
	}
	next.obs = newObservedState(b.observed)
	next.impacts.inherit(&prev.impacts)
	next.id = snapshotID(observedAcc(next.acc, b.observed), next.sources, next.limitations, b.opts.Freshness)
	return next
}

// sourceStates lists the sources with the Builder's counts, marking one
// stale when it has not synced within the freshness window.
func (b *Builder) sourceStates(now time.Time) []SourceState {
	out := make([]SourceState, 0, len(b.sources))
	for id, st := range b.sources {
		c := b.counts[id]
		st.RevisionCount, st.TargetCount = c[0], c[1]
		if b.opts.Freshness > 0 && st.Status == SourceAvailable && !st.LastSuccessfulSync.IsZero() && now.Sub(st.LastSuccessfulSync) > b.opts.Freshness {
			st.Status = SourceStale
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(x, y SourceState) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// snapshotID hashes the record accumulator, the sources' identities and
// states (not their timestamps) and the freshness window.
func snapshotID(acc [32]byte, sources []SourceState, lims []Limitation, freshness time.Duration) string {
	h := sha256.New()
	h.Write(acc[:])
	for _, st := range sources {
		code := ""
		if st.Error != nil {
			code = st.Error.Code
		}
		fmt.Fprintf(h, "\x00%s\x00%s\x00%s\x00%s", st.ID, st.Kind, st.Status, code)
	}
	for _, l := range lims {
		fmt.Fprintf(h, "\x01%s\x00%s\x00%s\x00%s", l.Code, l.Source, l.Subject, l.Message)
		if l.Scope != "" {
			fmt.Fprintf(h, "\x02%s", l.Scope)
		}
		if l.ClusterWide {
			h.Write([]byte{3})
		}
	}
	fmt.Fprintf(h, "\x00%d", freshness)
	return "snap-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// applier holds the transactions of one batch.
type applier struct {
	revs     *pmapTx[*revEntry]
	tgts     *pmapTx[*tgtEntry]
	svcs     *pmapTx[*service]
	ids      *svcTableTx
	in       *numberedTx[[]inRef] // the inbound index, by service number
	byName   *pmapTx[[]string]
	byDigest *pmapTx[[]string]
	deps     *pmapTx[[]string]
	tByName  *pmapTx[[]string]
	pinned   *pmapTx[[]string] // digest -> revision keys with an edge pinned to it
	post     *pmapTx[sorted[struct{}]]
	postTx   map[string]*sortedTx[struct{}] // posting lists this batch changed
	order    *sortedTx[string]
	attn     [nAttn]*sortedTx[attn]
	acc      [32]byte
	dirty    map[string]*service // services touched by this batch: private copies
	counts   map[string][2]int

	// scopeCount counts records per scope; shared with the previous
	// snapshot until the batch first changes it.
	scopeCount map[string]int
	scopeOwned bool

	stale   bool            // a freshness window is set: keep evidence times
	prev    *Snapshot       // the snapshot the batch applies to
	removed map[string]bool // revisions the batch removed (or replaced)
	recheck map[string]bool // revisions whose unresolved edges to recompute
	names   map[string]bool // service names that appeared or disappeared
	digests map[string]bool // revision digests that appeared or disappeared
}

// newApplier opens the transactions of one batch on prev; counts are the
// per-source record counts it keeps up to date.
func newApplier(prev *Snapshot, counts map[string][2]int, stale bool) *applier {
	a := &applier{
		revs: prev.revisions.edit(), tgts: prev.targets.edit(), svcs: prev.services.edit(), ids: prev.ids.edit(), in: prev.inIdx.edit(),
		byName: prev.byName.edit(), byDigest: prev.byDigest.edit(), deps: prev.depsByName.edit(), tByName: prev.targetsByName.edit(),
		pinned: prev.pinned.edit(), post: prev.post.edit(), postTx: map[string]*sortedTx[struct{}]{},
		order: prev.order.edit(), acc: prev.acc, dirty: map[string]*service{}, counts: counts,
		stale: stale, prev: prev, removed: map[string]bool{}, recheck: map[string]bool{}, names: map[string]bool{}, digests: map[string]bool{},
		scopeCount: prev.scopeCount,
	}
	for i := range a.attn {
		a.attn[i] = prev.attention[i].edit()
	}
	return a
}

// countScope moves a scope's record count, copying the shared map first.
func (a *applier) countScope(scope string, d int) {
	if !a.scopeOwned {
		a.scopeCount, a.scopeOwned = maps.Clone(a.scopeCount), true
		if a.scopeCount == nil {
			a.scopeCount = map[string]int{}
		}
	}
	if n := a.scopeCount[scope] + d; n > 0 {
		a.scopeCount[scope] = n
	} else {
		delete(a.scopeCount, scope)
	}
}

// list returns the batch's edit of a term's posting list.
func (a *applier) list(term string) *sortedTx[struct{}] {
	if tx, ok := a.postTx[term]; ok {
		return tx
	}
	old, _ := a.post.get(term)
	tx := old.edit()
	a.postTx[term] = tx
	return tx
}

func (a *applier) commitPostings() {
	for term, tx := range a.postTx {
		if tx.len() == 0 {
			a.post.del(term)
		} else {
			a.post.set(term, tx.commit())
		}
	}
}

func xor(acc *[32]byte, h [32]byte) {
	for i := range acc {
		acc[i] ^= h[i]
	}
}

// svc returns the batch's private copy of a service, creating it.
func (a *applier) svc(key, domain, name string) *service {
	if s, ok := a.dirty[key]; ok {
		return s
	}
	s := &service{key: key, domain: domain, name: name}
	if old, ok := a.svcs.get(key); ok {
		c := *old
		s = &c
	}
	a.dirty[key] = s
	return s
}

func (a *applier) addRevision(r *Revision) {
	a.addRevisionEntry(newRevEntry(r, contentHash("revision", r)))
}

// addRevisionEntry adds a revision whose content hash is known.
func (a *applier) addRevisionEntry(e *revEntry) {
	r := e.Revision
	key := r.Key()
	a.revs.set(key, e)
	xor(&a.acc, e.hash)
	s := a.svc(r.ServiceKey(), r.Domain, r.Name)
	s.revisions = withKey(s.revisions, key)
	add(a.byDigest, r.Digest, key)
	for _, n := range targetNames(e.targets) {
		add(a.deps, n, key)
	}
	for _, d := range targetDigests(e.targets) {
		add(a.pinned, d, key)
	}
	sk := s.key
	if r.Valid != nil && !*r.Valid {
		a.attn[attnInvalid].set(key, attn{service: sk, reason: revisionFindings(r)})
	}
	if r.Readiness == nil {
		a.attn[attnMissingReadiness].set(key, attn{service: sk, reason: "the contract declares no readiness"})
	}
	a.recheck[key] = true
	a.digests[r.Digest] = true
	c := a.counts[r.Source]
	c[0]++
	a.counts[r.Source] = c
	for _, sc := range r.scopesOrUnscoped() {
		a.countScope(sc, 1)
	}
}

func (a *applier) removeRevision(key string) {
	e, ok := a.revs.get(key)
	if !ok {
		return
	}
	a.revs.del(key)
	a.removed[key] = true
	xor(&a.acc, e.hash)
	s := a.svc(e.ServiceKey(), e.Domain, e.Name)
	s.revisions = withoutKey(s.revisions, key)
	remove(a.byDigest, e.Digest, key)
	for _, n := range targetNames(e.targets) {
		remove(a.deps, n, key)
	}
	for _, d := range targetDigests(e.targets) {
		remove(a.pinned, d, key)
	}
	a.attn[attnInvalid].del(key)
	a.attn[attnMissingReadiness].del(key)
	a.attn[attnUnresolved].delPrefix(key + relSep)
	a.digests[e.Digest] = true
	c := a.counts[e.Source]
	c[0]--
	a.counts[e.Source] = c
	for _, sc := range e.scopesOrUnscoped() {
		a.countScope(sc, -1)
	}
}

func (a *applier) addTarget(t *Target) {
	a.addTargetEntry(&tgtEntry{Target: t, hash: contentHash("target", t)})
}

// addTargetEntry adds a target whose content hash is known.
func (a *applier) addTargetEntry(e *tgtEntry) {
	t := e.Target
	// The composite key holds the service and target keys; the indexes
	// share its bytes instead of allocating each key again.
	sk0, key0 := t.ServiceKey(), t.Key()
	comp := compositeKey(sk0, key0)
	sk, key := comp[:len(sk0)], comp[len(sk0)+1:]
	a.tgts.set(key, e)
	xor(&a.acc, e.hash)
	s := a.svc(sk, domainOfKey(sk, t.Service), t.Service)
	s.targets = withKey(s.targets, key)
	add(a.tByName, t.Name, key)
	for _, term := range targetTerms(t) {
		a.list(term).set(comp, struct{}{})
	}
	switch t.compliance() {
	case StatusNonCompliant:
		a.attn[attnNonCompliant].set(key, attn{service: sk, reason: firstFinding(t, "evidence shows the target does not meet its contract")})
	case StatusUnknown:
		a.attn[attnUnknown].set(key, attn{service: sk, reason: unknownReason(t)})
	}
	if a.stale && !t.EvidenceAt.IsZero() {
		a.attn[attnStale].set(key, attn{service: sk, at: t.EvidenceAt})
	}
	c := a.counts[t.Source]
	c[1]++
	a.counts[t.Source] = c
	a.countScope(t.Scope, 1)
}

func (a *applier) removeTarget(key string) {
	e, ok := a.tgts.get(key)
	if !ok {
		return
	}
	a.tgts.del(key)
	xor(&a.acc, e.hash)
	sk := e.ServiceKey()
	s := a.svc(sk, domainOfKey(sk, e.Service), e.Service)
	s.targets = withoutKey(s.targets, key)
	remove(a.tByName, e.Name, key)
	comp := compositeKey(sk, key)
	for _, term := range targetTerms(e.Target) {
		a.list(term).del(comp)
	}
	a.attn[attnNonCompliant].del(key)
	a.attn[attnUnknown].del(key)
	a.attn[attnStale].del(key)
	c := a.counts[e.Source]
	c[1]--
	a.counts[e.Source] = c
	a.countScope(e.Scope, -1)
}

// finishServices recomputes each touched service from its records, drops
// the empty ones, and updates the name index, the key order and the
// numbers. The new services are numbered once the deleted ones have
// freed theirs, in key order, so one history of batches numbers its
// services one way.
func (a *applier) finishServices() {
	var created []*service
	for key, s := range a.dirty {
		old, existed := a.svcs.get(key)
		var was []string
		if existed {
			was = serviceTerms(old)
		}
		if len(s.revisions) == 0 && len(s.targets) == 0 {
			if existed {
				a.svcs.del(key)
				a.ids.release(old.id)
				a.in.put(old.id, nil) // the list goes with the number: a new service may take it
				a.order.del(key)
				remove(a.byName, s.name, key)
				a.updateTerms(key, was, nil)
				a.names[s.name] = true
			}
			continue
		}
		a.derive(s)
		a.svcs.set(key, s)
		a.updateTerms(key, was, serviceTerms(s))
		if !existed || old.lower != s.lower {
			a.order.set(key, s.lower)
		}
		if !existed {
			add(a.byName, s.name, key)
			a.names[s.name] = true
			created = append(created, s)
		} else {
			a.ids.put(s.id, s)
		}
	}
	a.ids.recycle()
	slices.SortFunc(created, func(x, y *service) int { return strings.Compare(x.key, y.key) })
	for _, s := range created {
		s.id = a.ids.take()
		a.ids.put(s.id, s)
	}
}

// updateTerms moves a service between posting lists: was and is are
// sorted term lists.
func (a *applier) updateTerms(key string, was, is []string) {
	i, j := 0, 0
	for i < len(was) || j < len(is) {
		switch {
		case j == len(is) || (i < len(was) && was[i] < is[j]):
			a.list(was[i]).del(key)
			i++
		case i == len(was) || is[j] < was[i]:
			a.list(is[j]).set(key, struct{}{})
			j++
		default:
			i, j = i+1, j+1
		}
	}
}

// relSep joins a revision key and an edge's reference in an unresolved
// edge's name.
const relSep = " → "

// recheckEdges recomputes the unresolved edges of every revision whose
// edges' resolution this batch may have changed: the revisions it added,
// those whose edges name a service that appeared or disappeared, and
// those pinned to a digest that appeared or disappeared.
func (a *applier) recheckEdges(next *Snapshot) {
	for name := range a.names {
		keys, _ := next.depsByName.get(name)
		for _, k := range keys {
			a.recheck[k] = true
		}
	}
	for d := range a.digests {
		keys, _ := next.pinned.get(d)
		for _, k := range keys {
			a.recheck[k] = true
		}
	}
	// The inbound index moves with the same revisions: their old entries
	// out, their edges as resolved here in.
	ed := a.unindexInbound()
	tx := a.attn[attnUnresolved]
	for k := range a.recheck {
		tx.delPrefix(k + relSep)
		re, ok := next.revisions.get(k)
		if !ok {
			continue
		}
		r := re.Revision
		from := r.ServiceKey()
		// The revision is next's, so its service is too.
		fromSvc := next.service(from)
		for i, e := range r.Edges {
			if rel := next.resolveFrom(from, k, e, re.targets[i]); !rel.Resolved {
				tx.set(unresolvedKey(k, e.Ref, i), attn{service: rel.FromService, reason: rel.Reason})
			} else {
				ed.add[rel.ToService] = append(ed.add[rel.ToService], inRef{rev: k, edge: newEdgePlace(i, e.Type == EdgeDependency), svc: fromSvc.id, resolvedRev: rel.ResolvedRevision, from: r})
			}
		}
	}
	ed.apply(a.in, next)
	next.inIdx = a.in.commit()
}

// unresolvedKey orders a revision's unresolved edges by name, then by
// their place in the contract.
func unresolvedKey(revKey, ref string, i int) string {
	return fmt.Sprintf("%s%s%s\x00%04d", revKey, relSep, ref, i)
}

// pinnedDigests are the digests a revision's edges pin.
func pinnedDigests(r *Revision) []string {
	return targetDigests(newRevEntry(r, [32]byte{}).targets)
}

// targetDigests are the distinct digests parsed edge targets pin.
func targetDigests(ts []edgeTarget) []string {
	var out []string
	for _, t := range ts {
		if t.digest != "" {
			out = append(out, t.digest)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// derive computes a service's owners, status and sources from its records.
func (a *applier) derive(s *service) {
	owners, sources := []string{}, []string{}
	s.revs = make([]*Revision, 0, len(s.revisions))
	s.tgts = make([]*Target, 0, len(s.targets))
	for _, k := range s.revisions {
		if e, ok := a.revs.get(k); ok {
			s.revs = append(s.revs, e.Revision)
			if e.Owner != "" {
				owners = append(owners, e.Owner)
			}
			sources = append(sources, e.Source)
		}
	}
	status := StatusNotEvaluated
	worst := len(Statuses())
	for _, k := range s.targets {
		if e, ok := a.tgts.get(k); ok {
			s.tgts = append(s.tgts, e.Target)
			sources = append(sources, e.Source)
			if sev := e.compliance().severity(); sev < worst {
				worst, status = sev, e.compliance()
			}
		}
	}
	slices.Sort(owners)
	slices.Sort(sources)
	s.owners = slices.Compact(owners)
	s.sources = slices.Compact(sources)
	s.status = status
	s.lower = strings.ToLower(s.name + "\x00" + strings.Join(s.owners, "\x00"))
}

// domainOfKey recovers a service's domain from its key, for a target that
// creates its service.
func domainOfKey(key, name string) string {
	esc := escapeKey(name)
	if key == esc {
		return ""
	}
	d := strings.TrimSuffix(key, "/"+esc)
	d = strings.ReplaceAll(d, "%2F", "/")
	return strings.ReplaceAll(d, "%25", "%")
}

// edgeNames are the distinct service names a revision's edges may resolve
// by: each reference's name and each dependency's alias. A service of one
// of them appearing or disappearing can change where the edge points.
func edgeNames(r *Revision) []string {
	return targetNames(newRevEntry(r, [32]byte{}).targets)
}

// targetNames are the distinct service names parsed edge targets may
// resolve by.
func targetNames(ts []edgeTarget) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.names()...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func add(tx *pmapTx[[]string], k, v string) {
	old, _ := tx.get(k)
	tx.set(k, withKey(old, v))
}

func remove(tx *pmapTx[[]string], k, v string) {
	old, _ := tx.get(k)
	if n := withoutKey(old, v); len(n) == 0 {
		tx.del(k)
	} else {
		tx.set(k, n)
	}
}

// Now is the Builder's clock (BuilderOptions.Clock): sources stamp the
// states they report with it, so a snapshot's times agree with each other.
func (b *Builder) Now() time.Time { return b.opts.Clock() }
