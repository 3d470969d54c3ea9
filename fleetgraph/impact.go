package fleetgraph

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/diff"
)

// ImpactSchema is the impact answer's schema, Pacto's.
const ImpactSchema = "pacto.dev/impact/v1"

// Compatibility verdicts (the new version against a consumer's range)
// and confidences.
const (
	VerdictCompatible   = "compatible"   // every range the consumer declares admits the new version
	VerdictIncompatible = "incompatible" // some range excludes it: the consumer will not pick it up
	VerdictUnknown      = "unknown"

	ConfidenceContractual = "contractual" // a declared edge with a version range
	ConfidenceDeclared    = "declared"    // a declared edge without a range
	ConfidenceInferred    = "inferred"    // reached through another consumer
)

// ImpactOptions configure Impact.
type ImpactOptions struct {
	// Domain qualifies the changed service's name; empty looks it up by
	// the new contract's name (unique across domains) or the old one's.
	Domain string
	// MaxConsumers bounds the consumers listed (default 5000); the answer
	// carries RESULT_TRUNCATED only when more exist.
	MaxConsumers int
	// IncludeObserved asks for observed (traced) caller edges next to the
	// declared ones. No observed-edge source exists yet, so the answer
	// carries an OBSERVED_EDGES_UNAVAILABLE limitation instead: a request
	// for evidence the server cannot give is never silently dropped.
	IncludeObserved bool
	// MaxBytes is the answer's byte budget (0: DefaultMaxBytes); Cursor
	// continues the consumer list of an answer that did not fit. A cursor
	// is bound to the snapshot and to the two revisions compared.
	MaxBytes int
	Cursor   string
	// Observed, when set, is the observed-edge set this call uses in
	// place of the snapshot's (pacto_impact's per-call traces); it
	// implies IncludeObserved.
	Observed *Observed
}

// Risks: what the change means to one consumer, the verdict read together
// with the diff's classification. A verdict alone answers "may it take the
// new version?"; a risk answers "will it break?".
const (
	// RiskAtRisk: a direct consumer whose range admits the new version
	// while the diff is BREAKING: it will take the breaking changes.
	RiskAtRisk = "at-risk"
	// RiskReview: a direct consumer whose range admits the new version
	// while some change is POTENTIAL_BREAKING.
	RiskReview = "review"
	// RiskExcluded: a direct consumer whose range excludes the new
	// version: it will not pick it up until it widens its range.
	RiskExcluded = "excluded"
	// RiskUnaffected: a direct consumer whose range admits the new version
	// while no change is breaking; or a transitive one that reaches the
	// service only through consumers that are excluded or unaffected.
	RiskUnaffected = "unaffected"
	// RiskIndirect: a transitive consumer that depends, through some
	// chain, on a consumer at risk (or to review).
	RiskIndirect = "indirect"
	// RiskUnknown: a direct consumer without a usable range (none, or one
	// that does not parse, or a new version that is not semver), or a
	// transitive one reached through such a consumer.
	RiskUnknown = "unknown"
)

// Consumer is a service that depends, directly or transitively, on the
// changed service.
type Consumer struct {
	Service              string   `json:"service"`
	Domain               string   `json:"domain,omitempty"`
	Depth                int      `json:"depth"`
	Direct               bool     `json:"direct"`
	Path                 []string `json:"path"` // consumer first, the changed service last
	Owner                string   `json:"owner,omitempty"`
	Required             bool     `json:"required"`
	Compatibility        string   `json:"compatibility,omitempty"`
	CompatibilityVerdict string   `json:"compatibilityVerdict"`
	Provenance           string   `json:"provenance"`
	Confidence           string   `json:"confidence"`
	// Risk is one of the Risk constants; RiskReason says why, in a
	// sentence. Both are kubepact's, beside Pacto's fields.
	Risk       string   `json:"risk"`
	RiskReason string   `json:"riskReason"`
	Status     Status   `json:"status"`
	Targets    []string `json:"targets"`
}

// ImpactResult is pacto_impact's answer: Pacto's fields, and kubepact's
// VersionBump, AtRisk, AtRiskConsumers, Excluded and IncompatibleConsumers,
// and each consumer's Risk. Headline says it in one line.
type ImpactResult struct {
	SchemaVersion              string        `json:"schemaVersion"`
	Meta                       Meta          `json:"meta"`
	Service                    string        `json:"service"`
	InFleet                    bool          `json:"inFleet"`
	OldVersion                 string        `json:"oldVersion"`
	NewVersion                 string        `json:"newVersion"`
	Classification             string        `json:"classification"`
	BreakingChanges            []diff.Change `json:"breakingChanges"`
	PotentiallyBreakingChanges []diff.Change `json:"potentiallyBreakingChanges"`
	NonBreakingChanges         []diff.Change `json:"nonBreakingChanges"`
	// VersionBump judges the version change against the diff: a
	// breaking change without a major version bump is flagged there.
	VersionBump diff.Bump `json:"versionBump"`
	// Consumers is the page of consumers that fits the byte budget, the
	// most affected first (at risk, to review, unknown, indirect,
	// excluded, unaffected; then nearest first). TotalConsumers,
	// ConsumersByRisk and ConsumersByDepth count them all;
	// RemainingConsumers are on later pages, which NextCursor reads.
	Consumers          []Consumer     `json:"consumers"`
	TotalConsumers     int            `json:"totalConsumers"`
	ConsumersByRisk    map[string]int `json:"consumersByRisk"`
	ConsumersByDepth   []DepthCount   `json:"consumersByDepth"`
	RemainingConsumers int            `json:"remainingConsumers,omitempty"`
	NextCursor         string         `json:"nextCursor,omitempty"`
	// AtRiskConsumers counts the consumers at risk (RiskAtRisk); AtRisk
	// names those on this page.
	AtRiskConsumers int      `json:"atRiskConsumers"`
	AtRisk          []string `json:"atRisk"`
	// IncompatibleConsumers counts the direct consumers whose range
	// excludes the new version (RiskExcluded): they will not pick it up
	// until they widen their range. Excluded names those on this page.
	IncompatibleConsumers int      `json:"incompatibleConsumers"`
	Excluded              []string `json:"excluded"`
	ActiveTargets         []string `json:"activeTargets"`
	Owners                []string `json:"owners"`
}

// Impact diffs two revisions of a contract and projects the changes onto
// the snapshot: every service that depends on the changed one, with a
// verdict of the new version against each direct consumer's range. It
// stops with ctx's error when ctx ends (in the diff, or between the
// services the walk over dependents reaches).
//
// The walk over consumers, their risks and counts do not depend on the
// page asked for, so a snapshot keeps the last few (impactMemo): a repeat
// or a next page on the same snapshot only writes its page.
func (s *Snapshot) Impact(ctx context.Context, older, newer *bundle.Bundle, opts *ImpactOptions) (*ImpactResult, error) {
	if opts == nil {
		opts = &ImpactOptions{}
	}
	maxConsumers := opts.MaxConsumers
	if maxConsumers <= 0 {
		maxConsumers = 5000
	}
	budget, err := checkMaxBytes(opts.MaxBytes)
	if err != nil {
		return nil, err
	}
	oldID, newID := older.Identity.String(), newer.Identity.String()
	filter := s.filterKey(struct {
		Old, New        string
		Domain          string
		IncludeObserved bool
		MaxConsumers    int
	}{oldID, newID, opts.Domain, opts.IncludeObserved, maxConsumers})
	offset, err := s.pageCursor(opts.Cursor, filter)
	if err != nil {
		return nil, err
	}
	// A walk is kept only when its inputs are named by the filter: both
	// bundles by their content digests, and the snapshot's own observed
	// edges (a call's own traces are not).
	keep := oldID != "" && newID != "" && opts.Observed == nil
	var w *impactWalk
	if keep {
		w = s.impacts.get(filter)
	}
	if w == nil && keep {
		w = s.carryImpact(filter, older, newer, opts)
	}
	if w == nil {
		if w, err = s.walkImpact(ctx, older, newer, opts, maxConsumers); err != nil {
			return nil, err
		}
		w.carry = w.carry && keep
	}
	if keep {
		s.impacts.put(filter, w)
	}
	res := w.answer(s)
	if res.InFleet {
		s.pageImpact(res, w, pageSpec{budget: budget, offset: offset, filter: filter})
	}
	return res, nil
}

// impactWalk is an impact answer but its page and envelope: every
// consumer found, with its risk, in the order pages list them. It is
// never modified once made; answer copies what a call may change.
type impactWalk struct {
	res       ImpactResult // Consumers, AtRisk, Excluded and Meta unset
	lims      []Limitation
	consumers []Consumer // breadth first; Path and Targets are shared, cloned onto a page
	parent    []int32    // the consumer a consumer was reached from, -1 for the changed service
	via       []int32    // see transitiveRisks
	order     []int32    // consumers most affected first
	root      string     // the changed service's key, the last of every path
	// reads are the inbound-index lists the walk read, by service: a
	// later snapshot whose lists of those services are the same slices
	// (the index rebuilds a list whenever an edge into it may resolve
	// otherwise) would walk the same consumers, ranges and risks, so it
	// takes the walk with only its services' records read again
	// (carryImpact). carry is false for walks that read more than the
	// index: observed edges, a service not in the fleet; those keep no
	// reads.
	reads []inRead
	carry bool
}

// inRead is one inbound-index list a walk read: whose (the consumer's
// place, -1 for the changed service, so that the walk names the service
// by the key it keeps anyway), and which slice, by its first entry and
// length. 16 bytes a list; a hub's walk reads thousands.
type inRead struct {
	of    int32
	n     int32
	first *inRef
}

// readKey is the service whose list r is.
func (w *impactWalk) readKey(r inRead) string {
	if r.of < 0 {
		return w.root
	}
	return w.consumers[r.of].Service
}

// answer is a fresh result of w for one call, without its page.
func (w *impactWalk) answer(s *Snapshot) *ImpactResult {
	res := w.res
	res.Meta = s.meta(w.lims)
	res.BreakingChanges = slices.Clone(w.res.BreakingChanges)
	res.PotentiallyBreakingChanges = slices.Clone(w.res.PotentiallyBreakingChanges)
	res.NonBreakingChanges = slices.Clone(w.res.NonBreakingChanges)
	res.ActiveTargets = slices.Clone(w.res.ActiveTargets)
	res.Owners = slices.Clone(w.res.Owners)
	res.ConsumersByRisk = maps.Clone(w.res.ConsumersByRisk)
	res.ConsumersByDepth = slices.Clone(w.res.ConsumersByDepth)
	res.Consumers, res.AtRisk, res.Excluded = []Consumer{}, []string{}, []string{}
	return &res
}

// path is consumer i's path, itself first, the changed service last,
// in strings taken from a.
func (w *impactWalk) path(i int, a *stringArena) []string {
	n := 1
	for j := int32(i); j >= 0; j = w.parent[j] {
		n++
	}
	out := a.take(n)[:0]
	for j := int32(i); j >= 0; j = w.parent[j] {
		out = append(out, w.consumers[j].Service)
	}
	return append(out, w.root)
}

// stringArena hands out the string slices of one page's consumers (paths,
// targets) from shared blocks: a page lists a few hundred consumers, each
// with two lists of its own, which were most of a call's allocations.
// Each slice is capped at its length, so appending to one never writes
// into its neighbour.
type stringArena struct{ free []string }

// stringArenaBlock is the strings of an arena block, 8 KB.
const stringArenaBlock = 512

func (a *stringArena) take(n int) []string {
	if a.free == nil || cap(a.free)-len(a.free) < n { // a nil block would hand out nil, which encodes as null
		a.free = make([]string, 0, max(n, stringArenaBlock))
	}
	l := len(a.free)
	a.free = a.free[:l+n]
	return a.free[l : l+n : l+n]
}

// maxImpactWalks bounds the walks a snapshot keeps (each up to
// MaxConsumers consumers, about 200 bytes each): a caller cycling through
// bundle pairs evicts them and pays for its own walks, as without a memo.
const maxImpactWalks = 4

// impactMemo keeps a snapshot's last impact walks, by filter key, and
// the walks of the snapshot before it that may carry over (old).
type impactMemo struct {
	mu    sync.Mutex
	keys  []string
	walks []*impactWalk
	old   map[string]*impactWalk
}

func (m *impactMemo) get(key string) *impactWalk {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.keys, key); i >= 0 {
		return m.walks[i]
	}
	return nil
}

func (m *impactMemo) put(key string, w *impactWalk) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Contains(m.keys, key) {
		return
	}
	if len(m.keys) >= maxImpactWalks {
		m.keys, m.walks = slices.Delete(m.keys, 0, 1), slices.Delete(m.walks, 0, 1)
	}
	m.keys, m.walks = append(m.keys, key), append(m.walks, w)
}

// takeOld removes and returns the inherited walk for key, if any.
func (m *impactMemo) takeOld(key string) *impactWalk {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.old[key]
	delete(m.old, key)
	return w
}

// inherit hands prev's carriable walks to m, the next snapshot's memo:
// its own, and those it inherited and never used, at most
// maxImpactWalks. The walks hold no snapshot, so no chain of snapshots
// is kept alive.
func (m *impactMemo) inherit(prev *impactMemo) {
	prev.mu.Lock()
	defer prev.mu.Unlock()
	old := map[string]*impactWalk{}
	for i := len(prev.keys) - 1; i >= 0 && len(old) < maxImpactWalks; i-- {
		if prev.walks[i].carry {
			old[prev.keys[i]] = prev.walks[i]
		}
	}
	for k, w := range prev.old {
		if len(old) >= maxImpactWalks {
			break
		}
		if _, ok := old[k]; !ok {
			old[k] = w
		}
	}
	m.old = old
}

// carryImpact takes the walk an earlier snapshot made for filter when
// every inbound-index list it read is unchanged here and the changed
// service is the same: its consumers, ranges and risks stand, and only
// what it took from the services' records (domain, status, targets,
// owners) is read again. nil when there is none or it does not carry.
func (s *Snapshot) carryImpact(filter string, older, newer *bundle.Bundle, opts *ImpactOptions) *impactWalk {
	old := s.impacts.takeOld(filter)
	if old == nil {
		return nil
	}
	if sv := s.impactRoot(opts.Domain, older, newer); sv == nil || sv.key != old.root {
		return nil
	}
	for _, r := range old.reads {
		cur := s.inboundOf(old.readKey(r))
		if len(cur) != int(r.n) || len(cur) > 0 && &cur[0] != r.first {
			return nil
		}
	}
	w := *old
	w.consumers = slices.Clone(old.consumers)
	owners := map[string]bool{}
	for i := range w.consumers {
		c := &w.consumers[i]
		csv := s.service(c.Service)
		if csv == nil {
			return nil
		}
		c.Domain, c.Status, c.Targets, c.Owner = csv.domain, csv.status, csv.targets, ""
		if len(csv.owners) > 0 {
			c.Owner = csv.owners[0]
			for _, o := range csv.owners {
				owners[o] = true
			}
		}
	}
	root := s.service(old.root)
	w.res.ActiveTargets = slices.Clone(root.targets)
	if w.res.ActiveTargets == nil {
		w.res.ActiveTargets = []string{}
	}
	w.res.Owners = slices.Sorted(mapsKeys(owners))
	if w.res.Owners == nil {
		w.res.Owners = []string{}
	}
	return &w
}

// impactRoot is the changed service: by domain and the new contract's
// name, else (no domain given) by a name unique across domains, the new
// contract's or the old one's.
func (s *Snapshot) impactRoot(domain string, older, newer *bundle.Bundle) *service {
	name := newer.Contract.Service.Name
	sv := s.service(ServiceKey(domain, name))
	if sv == nil && domain == "" {
		sv, _ = s.findService(name)
		if sv == nil {
			sv, _ = s.findService(older.Contract.Service.Name)
		}
	}
	return sv
}

// inboundRead is the inbound-index list of the service sv, the consumer
// at place of (-1: the changed service), noted in sc. The walk reads each
// edge through the entry (inRef.edgeOf), so it builds no Relationship.
func (s *Snapshot) inboundRead(sc *walkScratch, of int32, sv *service) []inRef {
	refs := s.inIdx.at(sv.id)
	r := inRead{of: of, n: int32(len(refs))}
	if len(refs) > 0 {
		r.first = &refs[0]
	}
	sc.reads = append(sc.reads, r)
	return refs
}

// walkScratch is what a cold walk needs only while it walks: the mark of
// the services it reached (a slot per service number), the lists it
// read, the consumers' parents and service numbers, the consumer graph
// and the queues. A hub's walk at 10,000 services made about 1.5 MB of
// them, which the garbage collector then paid for while other walks
// waited for a core: walks take them from walkScratchPool and give them
// back cleared (release), so each walk, concurrent or not, starts from
// nothing marked and no walk sees another's.
type walkScratch struct {
	at     places // all zero between walks
	reads  []inRead
	parent []int32
	svc    []svcID // the consumers' service numbers, in the snapshot that walks
	graph  dependents
	deps   []depRef
	ord    []int32
	queue  []int32
}

var walkScratchPool = sync.Pool{New: func() any { return new(walkScratch) }}

// newWalkScratch is a cleared scratch whose marks cover n service numbers.
func newWalkScratch(n int) *walkScratch {
	sc := walkScratchPool.Get().(*walkScratch)
	if cap(sc.at) < n {
		sc.at = make(places, n)
	}
	sc.at = sc.at[:n]
	sc.graph.off = append(sc.graph.off, 0)
	return sc
}

// release clears sc and returns it to the pool: the marks to zero, and
// the entries that point into a snapshot, so that the pool keeps none
// alive.
func (sc *walkScratch) release() {
	clear(sc.at[:cap(sc.at)])
	clear(sc.reads)
	clear(sc.deps)
	sc.reads, sc.parent, sc.svc = sc.reads[:0], sc.parent[:0], sc.svc[:0]
	sc.graph.off, sc.graph.adj = sc.graph.off[:0], sc.graph.adj[:0]
	sc.deps, sc.ord, sc.queue = sc.deps[:0], sc.ord[:0], sc.queue[:0]
	walkScratchPool.Put(sc)
}

// depRef is one dependency edge into a walked service from a service the
// walk has not reached yet.
type depRef struct {
	from *service // the declaring service
	e    *Edge
	pos  int32 // its place among the list's dependency edges
}

// dependents is the walk's consumer graph for transitiveRisks, in place
// order: the dependents of the service with walk index n (0 the changed
// service, 1+p consumer p) are places adj[off[n]:off[n+1]], in the order
// of the service's inbound list, for every service whose list the walk
// went through to its end. Those it did not (the walk stopped at its
// bound) are read again from the index.
type dependents struct {
	off []int32
	adj []int32
}

// of is the dependents of consumer p (-1: the changed service) and
// whether the walk recorded them.
func (d *dependents) of(p int32) ([]int32, bool) {
	n := int(p) + 1
	if n+1 >= len(d.off) {
		return nil, false
	}
	return d.adj[d.off[n]:d.off[n+1]], true
}

// walkImpact diffs older and newer and walks the changed service's
// consumers, breadth first.
func (s *Snapshot) walkImpact(ctx context.Context, older, newer *bundle.Bundle, opts *ImpactOptions, maxConsumers int) (*impactWalk, error) {
	changes, err := s.diffs.diff(ctx, older, newer)
	if err != nil {
		return nil, err
	}
	w := &impactWalk{}
	res := &w.res
	*res = ImpactResult{
		SchemaVersion: ImpactSchema, OldVersion: older.Contract.Service.Version, NewVersion: newer.Contract.Service.Version,
		Classification: diff.Classification(changes), BreakingChanges: []diff.Change{}, PotentiallyBreakingChanges: []diff.Change{}, NonBreakingChanges: []diff.Change{},
		VersionBump:   diff.JudgeBump(older.Contract.Service.Version, newer.Contract.Service.Version, changes),
		ActiveTargets: []string{}, Owners: []string{},
		ConsumersByRisk: map[string]int{}, ConsumersByDepth: []DepthCount{},
	}
	for _, c := range changes {
		switch c.Classification {
		case diff.Breaking:
			res.BreakingChanges = append(res.BreakingChanges, c)
		case diff.PotentiallyBreaking:
			res.PotentiallyBreakingChanges = append(res.PotentiallyBreakingChanges, c)
		default:
			res.NonBreakingChanges = append(res.NonBreakingChanges, c)
		}
	}
	res.Service = ServiceKey(opts.Domain, newer.Contract.Service.Name)
	sv := s.impactRoot(opts.Domain, older, newer)
	obsSet := opts.Observed
	if obsSet == nil {
		obsSet = s.observedSet()
	}
	useObs := opts.IncludeObserved || opts.Observed != nil
	if useObs && obsSet == nil {
		w.lims = append(w.lims, Limitation{Code: LimitObservedUnavailable,
			Message: "observed edges were requested, but no observed-edge source is configured: consumers come from declared edges only, and a caller that declares nothing is not listed"})
	}
	if sv == nil {
		w.lims = append(w.lims, Limitation{Code: LimitServiceNotInFleet, Subject: res.Service,
			Message: "service " + res.Service + " is not in the fleet snapshot: no consumer can be named, which proves nothing about whether any exist"})
		return w, nil
	}
	res.Service, res.InFleet = sv.key, true
	w.root, w.carry = sv.key, !useObs
	res.ActiveTargets = slices.Clone(sv.targets)
	if res.ActiveTargets == nil {
		res.ActiveTargets = []string{}
	}
	newVersion, verr := semver.NewVersion(res.NewVersion)
	// A hub's consumers declare a handful of distinct ranges: each is
	// parsed once per call, and each distinct list of ranges is judged,
	// and its risk written, once.
	constraints := map[string]constraint{}
	type judged struct{ verdict, risk, reason string }
	judgements := map[string]judged{}

	// Breadth first over dependents: the first time a service is reached is
	// its shortest path. sc.at marks a reached service, by number, with
	// its place among the consumers (-1: the changed service). sc.graph
	// keeps who depends on whom for transitiveRisks, which walks the same
	// services again. sc.ord is the place of the service declaring each
	// dependency edge into the service being expanded, in the list's
	// order.
	sc := newWalkScratch(s.ids.len())
	defer sc.release()
	at, graph := sc.at, &sc.graph
	at.set(sv.id, -1)
	type node struct {
		sv    *service
		place int32 // among the consumers, -1 for the changed service
		depth int
	}
	owners := map[string]bool{}
	// sc.deps is the dependency edges into the service being expanded
	// from services not reached yet, ordered by the declaring service's
	// key (each one's edges in the order its list holds them), reused from
	// one service to the next.
	deps, ord := sc.deps, sc.ord
	var ranges []string
	// truncated is set when a consumer is left out, not when the bound is
	// merely reached: with exactly maxConsumers consumers the walk goes on
	// until it finds another or runs out.
	truncated := false
	var found consumerBlocks
	defer found.release() // on an early return; flush has released them otherwise
	// The queue is the consumers themselves, in the order found: next is
	// the place of the next one to expand, -1 the changed service.
	for next := -1; next < found.n && !truncated; next++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur := node{sv: sv, place: -1}
		if next >= 0 {
			cur = node{sv: s.serviceAt(sc.svc[next]), place: int32(next), depth: found.at(next).Depth}
		}
		in := s.inboundRead(sc, cur.place, cur.sv)
		deps, ord = deps[:0], ord[:0]
		for i := range in {
			r := &in[i]
			if !r.edge.dep() {
				continue
			}
			p, ok := at.get(r.svc)
			if !ok {
				deps = append(deps, depRef{from: s.serviceAt(r.svc), e: r.edgeOf(), pos: int32(len(ord))})
			}
			ord = append(ord, p) // set below for a service not reached yet
		}
		slices.SortFunc(deps, func(a, b depRef) int {
			return cmp.Or(strings.Compare(a.from.key, b.from.key), cmp.Compare(a.pos, b.pos))
		})
		for g := 0; g < len(deps); {
			csv := deps[g].from
			h := g + 1
			for h < len(deps) && deps[h].from == csv {
				h++
			}
			run := deps[g:h]
			g = h
			if found.n >= maxConsumers {
				truncated = true
				break
			}
			place := int32(found.n)
			at.set(csv.id, place)
			for _, d := range run {
				ord[d.pos] = place
			}
			ck := csv.key
			depth := cur.depth + 1
			c := Consumer{Service: ck, Domain: csv.domain, Depth: depth, Direct: depth == 1,
				Provenance: "declared", Status: csv.status, Targets: csv.targets}
			if len(csv.owners) > 0 {
				c.Owner = csv.owners[0]
				for _, o := range csv.owners {
					owners[o] = true
				}
			}
			ranges = ranges[:0]
			for _, d := range run {
				c.Required = c.Required || d.e.Required
				if d.e.Compatibility != "" && !slices.Contains(ranges, d.e.Compatibility) {
					ranges = append(ranges, d.e.Compatibility)
				}
			}
			c.Compatibility = strings.Join(ranges, " | ")
			switch {
			case !c.Direct:
				c.CompatibilityVerdict, c.Confidence = VerdictUnknown, ConfidenceInferred
			default:
				c.Confidence = ConfidenceContractual
				if len(ranges) == 0 {
					c.Confidence = ConfidenceDeclared
				}
				jk := strings.Join(ranges, "\x00")
				j, ok := judgements[jk]
				if !ok {
					var why string
					if len(ranges) == 0 {
						j.verdict = VerdictUnknown
						why = "it declares no version range, so whether it takes " + res.NewVersion + " is not known"
					} else {
						j.verdict, why = verdict(res.NewVersion, newVersion, verr, ranges, constraints)
					}
					j.risk, j.reason = directRisk(res, c.Compatibility, j.verdict, why)
					judgements[jk] = j
				}
				c.CompatibilityVerdict, c.Risk, c.RiskReason = j.verdict, j.risk, j.reason
			}
			found.add(c)
			sc.parent = append(sc.parent, cur.place)
			sc.svc = append(sc.svc, csv.id)
		}
		if !truncated {
			// The list went through to its end: its dependents, in the
			// list's order, for transitiveRisks.
			for _, p := range ord {
				if p >= 0 {
					graph.adj = append(graph.adj, p)
				}
			}
			graph.off = append(graph.off, int32(len(graph.adj)))
		}
	}
	sc.deps, sc.ord = deps, ord // kept for the next walk, cleared in release
	w.consumers = found.flush(w.consumers)
	if useObs && obsSet != nil {
		w.lims = append(w.lims, s.observedConsumers(w, sc, sv, obsSet, maxConsumers, &truncated, owners)...)
	}
	w.parent = slices.Clone(sc.parent)
	w.via = s.transitiveRisks(w, sc)
	if w.carry {
		w.reads = slices.Clone(sc.reads)
	}
	if truncated {
		w.lims = append(w.lims, Limitation{Code: LimitResultTruncated, Message: "the consumer list reached its bound: more consumers exist than it lists"})
	}
	res.Owners = slices.Sorted(mapsKeys(owners))
	if res.Owners == nil {
		res.Owners = []string{}
	}
	w.count()
	return w, nil
}

// consumerBlock is the length of a consumerBlocks block: 256 consumers,
// about 60 KB.
const consumerBlock = 256

// consumerBlockPool keeps consumerBlocks' blocks between walks.
var consumerBlockPool = sync.Pool{New: func() any { return new([consumerBlock]Consumer) }}

// consumerBlocks collects a walk's declared consumers in fixed blocks, so
// that the walk, which cannot know how many it will find, copies each
// consumer once, into a slice of the exact length (flush), instead of
// growing one slice by doubling: a hub's thousands of consumers, about
// 230 bytes each, were most of a cold walk's allocation.
type consumerBlocks struct {
	blocks []*[consumerBlock]Consumer
	n      int
}

func (b *consumerBlocks) add(c Consumer) {
	i := b.n % consumerBlock
	if i == 0 {
		b.blocks = append(b.blocks, consumerBlockPool.Get().(*[consumerBlock]Consumer))
	}
	b.blocks[len(b.blocks)-1][i] = c
	b.n++
}

func (b *consumerBlocks) at(i int) *Consumer { return &b.blocks[i/consumerBlock][i%consumerBlock] }

// flush appends the consumers to dst, in order, and releases the blocks.
func (b *consumerBlocks) flush(dst []Consumer) []Consumer {
	dst = slices.Grow(dst, b.n)
	for i, blk := range b.blocks {
		dst = append(dst, blk[:min(consumerBlock, b.n-i*consumerBlock)]...)
	}
	b.release()
	return dst
}

// release returns the blocks to the pool, cleared so that the pool holds
// no strings of a snapshot.
func (b *consumerBlocks) release() {
	for _, blk := range b.blocks {
		clear(blk[:])
		consumerBlockPool.Put(blk)
	}
	b.blocks, b.n = nil, 0
}

// risksByRank orders consumers most affected first.
var risksByRank = [...]string{RiskAtRisk, RiskReview, RiskUnknown, RiskIndirect, RiskExcluded, RiskUnaffected}

// riskRank is risk's place in risksByRank, and whether it has one (0
// when not).
func riskRank(risk string) (int, bool) {
	switch risk {
	case RiskAtRisk:
		return 0, true
	case RiskReview:
		return 1, true
	case RiskUnknown:
		return 2, true
	case RiskIndirect:
		return 3, true
	case RiskExcluded:
		return 4, true
	case RiskUnaffected:
		return 5, true
	}
	return 0, false
}

// count orders w's consumers most affected first and counts them.
func (w *impactWalk) count() {
	// Breadth first already, so nearest first within a risk: a stable
	// bucket per risk orders them without moving the consumers around:
	// counted first, so that order is the only slice made.
	// The counts by risk and depth are kept in arrays, the maps written
	// once: a hub's thousands of consumers hashed their risk three times.
	cs := w.consumers
	var start [len(risksByRank) + 1]int // start[r+1] counts rank r
	var byRank [len(risksByRank)]int
	var others map[string]int // risks not ranked, first with rank 0 (none is written today)
	var depths []int          // by depth, depth 0 unused
	for i := range cs {
		c := &cs[i]
		r, ok := riskRank(c.Risk)
		start[r+1]++
		if ok {
			byRank[r]++
		} else {
			if others == nil {
				others = map[string]int{}
			}
			others[c.Risk]++
		}
		if c.Depth >= len(depths) {
			depths = append(depths, make([]int, c.Depth+1-len(depths))...)
		}
		depths[c.Depth]++
	}
	res := &w.res
	for r, n := range byRank {
		if n > 0 {
			res.ConsumersByRisk[risksByRank[r]] += n
		}
	}
	for k, n := range others {
		res.ConsumersByRisk[k] += n
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	w.order = make([]int32, len(cs))
	for i := range cs {
		r, _ := riskRank(cs[i].Risk)
		w.order[start[r]] = int32(i)
		start[r]++
	}
	res.TotalConsumers = len(cs)
	for d, n := range depths {
		if n > 0 {
			res.ConsumersByDepth = append(res.ConsumersByDepth, DepthCount{Depth: d, Count: n})
		}
	}
	res.AtRiskConsumers, res.IncompatibleConsumers = res.ConsumersByRisk[RiskAtRisk], res.ConsumersByRisk[RiskExcluded]
}

// pageImpact keeps the page of w's consumers, from p's offset, that fits
// the budget. A consumer on the page gets its own path and targets, and a
// transitive one its reason (written for the page only).
func (s *Snapshot) pageImpact(res *ImpactResult, w *impactWalk, p pageSpec) {
	pg := newPager(p.budget, res)
	end := min(p.offset, len(w.order))
	var strs stringArena
	for _, j := range w.order[end:] {
		c := w.consumers[j]
		c.Path = w.path(int(j), &strs)
		targets := strs.take(len(c.Targets)) // never nil: an empty list is []
		copy(targets, c.Targets)
		c.Targets = targets
		if from := w.via[j]; from >= 0 {
			c.RiskReason = transitiveReason(c.Risk, w.consumers[from])
		}
		n := encodedLen(c)
		named := c.Risk == RiskAtRisk || c.Risk == RiskExcluded
		if named {
			n += len(c.Service) + 3
		}
		if !pg.take(n) {
			break
		}
		end++
		res.Consumers = append(res.Consumers, c)
		switch c.Risk {
		case RiskAtRisk:
			res.AtRisk = append(res.AtRisk, c.Service)
		case RiskExcluded:
			res.Excluded = append(res.Excluded, c.Service)
		}
	}
	res.NextCursor = s.nextPage(p.filter, end, len(w.order))
	res.RemainingConsumers = len(w.order) - end
}

// verdict checks the new version against every range a consumer declares:
// incompatible when one excludes it, compatible when all admit it, unknown
// when the version or a range does not parse (why says which).
func verdict(version string, v *semver.Version, verr error, ranges []string, parsed map[string]constraint) (string, string) {
	if verr != nil {
		return VerdictUnknown, version + " is not a semantic version, so no range can judge it"
	}
	out, why := VerdictCompatible, ""
	for _, r := range ranges {
		pc, ok := parsed[r]
		if !ok {
			pc.c, pc.err = semver.NewConstraint(r)
			parsed[r] = pc
		}
		c, err := pc.c, pc.err
		if err != nil {
			out, why = VerdictUnknown, "its range "+r+" does not parse as a semantic-version range, so whether it takes "+version+" is not known"
			continue
		}
		if !c.Check(v) {
			return VerdictIncompatible, "its range " + r + " excludes " + version
		}
	}
	return out, why
}

// constraint is a range as semver parses it, or why it does not parse.
type constraint struct {
	c   *semver.Constraints
	err error
}

// directRisk reads a direct consumer's verdict (of its ranges, compat)
// together with the diff.
func directRisk(res *ImpactResult, compat, judged, why string) (string, string) {
	admits := "its range " + compat + " admits " + res.NewVersion
	switch judged {
	case VerdictIncompatible:
		return RiskExcluded, why + ": it will not pick it up until it widens its range"
	case VerdictUnknown:
		return RiskUnknown, why
	}
	switch res.Classification {
	case diff.Breaking:
		return RiskAtRisk, fmt.Sprintf("%s, which has %d breaking change(s): it will take them", admits, contractChanges(res.BreakingChanges))
	case diff.PotentiallyBreaking:
		return RiskReview, fmt.Sprintf("%s, and %d change(s) may break it: review them", admits, contractChanges(res.PotentiallyBreakingChanges))
	}
	return RiskUnaffected, admits + ", and no change is breaking"
}

// contractChanges counts the changes of a list but the version's own
// entry: what the revision changes, not how it is numbered.
func contractChanges(cs []diff.Change) int {
	n := 0
	for _, c := range cs {
		if c.Path != "service.version" {
			n++
		}
	}
	return n
}

// transitiveRisks gives every transitive consumer the worst exposure of
// the direct consumers it depends on through any chain, not only the
// shortest path: indirect through one at risk or to review, else unknown
// through one of unknown exposure, else unaffected. The walk follows
// dependents from each direct consumer and stays among the listed
// consumers (sc.at: service number -> place), so it is bounded by them
// and their edges. It returns, per consumer, the place of the direct
// consumer whose exposure it took (-1 for the others): the reason, a
// sentence, is written only for the consumers an answer lists
// (transitiveReason).
func (s *Snapshot) transitiveRisks(w *impactWalk, sc *walkScratch) []int32 {
	cs, graph, at := w.consumers, &sc.graph, sc.at
	via := make([]int32, len(cs)) // transitive consumer → the direct consumer it was reached from
	for i := range via {
		via[i] = -1
	}
	// Each consumer is queued at most once per pass (below), so one
	// slice of their number serves every pass, read from a head index.
	queue := slices.Grow(sc.queue[:0], len(cs))
	defer func() { sc.queue = queue }()
	for _, pass := range []struct {
		from []string // direct risks that spread
		risk string
	}{{[]string{RiskAtRisk, RiskReview}, RiskIndirect}, {[]string{RiskUnknown}, RiskUnknown}} {
		queue = queue[:0]
		for i := range cs {
			if c := &cs[i]; c.Direct && slices.Contains(pass.from, c.Risk) {
				queue = append(queue, int32(i))
			}
		}
		for h := 0; h < len(queue); h++ {
			cur := queue[h]
			from := cur
			if !cs[cur].Direct {
				from = via[cur]
			}
			spread := func(j int32) {
				if j < 0 || cs[j].Direct || cs[j].Risk != "" {
					return
				}
				cs[j].Risk = pass.risk
				via[j] = from
				queue = append(queue, j)
			}
			if ps, ok := graph.of(cur); ok {
				for _, j := range ps {
					spread(j)
				}
				continue
			}
			// The walk stopped before this consumer's list: read it (once:
			// a consumer takes one risk, so it is dequeued at most once).
			in := s.inboundRead(sc, cur, s.serviceAt(sc.svc[cur]))
			for i := range in {
				if !in[i].edge.dep() {
					continue
				}
				if j, ok := at.get(in[i].svc); ok {
					spread(j)
				}
			}
		}
	}
	unaffected := "it reaches " + w.res.Service + " only through consumers that will not take the change or are not affected by it"
	for i := range cs {
		if c := &cs[i]; c.Risk == "" {
			c.Risk, c.RiskReason = RiskUnaffected, unaffected
		}
	}
	return via
}

// transitiveReason says why a transitive consumer has the risk it took
// from the direct consumer from.
func transitiveReason(risk string, from Consumer) string {
	if risk == RiskIndirect {
		return fmt.Sprintf("it depends, directly or through other consumers, on %s, which is %s: whether the change reaches it depends on what %s passes on", from.Service, strings.ReplaceAll(from.Risk, "-", " "), from.Service)
	}
	return fmt.Sprintf("it depends on %s, whose exposure is unknown", from.Service)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
