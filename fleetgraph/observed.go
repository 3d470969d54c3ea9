package fleetgraph

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Observed-edge limitation codes and provenances.
const (
	// LimitObservedIdentityUnresolved: an observed caller or callee names
	// no single service of the snapshot (none, or more than one across
	// domains), so its edges are left out of the answer.
	LimitObservedIdentityUnresolved = "OBSERVED_IDENTITY_UNRESOLVED"
	// LimitObservedTruncated: the observed-edge set reached one of its
	// bounds; edges past it were not recorded.
	LimitObservedTruncated = "OBSERVED_EDGES_TRUNCATED"

	ProvenanceDeclared         = "declared"
	ProvenanceObserved         = "observed"
	ProvenanceDeclaredObserved = "declared+observed"

	// ConfidenceObserved: the consumer is seen calling the service and
	// declares no dependency on it. ConfidenceCorroborated: it declares
	// one, and is seen calling too.
	ConfidenceObserved     = "observed"
	ConfidenceCorroborated = "corroborated"
)

// ObservedEdge is one caller → callee pair seen in traces: From and To
// are the traced service names (the service.name resource attribute),
// Calls how many calls were seen, LastSeen the end of the latest one.
type ObservedEdge struct {
	From     string    `json:"from"`
	To       string    `json:"to"`
	Calls    int64     `json:"calls"`
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

// Observed is an immutable set of observed edges, as the Builder
// publishes it beside the records: at most one edge per pair, sorted.
type Observed struct {
	edges    []ObservedEdge
	services map[string]bool // every traced service name, caller or callee
	hash     [32]byte
	// Truncated says a bound left edges out; Note says which, in a
	// sentence.
	truncated bool
	note      string
}

// NewObserved builds the set from edges, merging duplicates (calls add
// up, the latest LastSeen stands). truncation, when not empty, says why
// some edges are missing; answers carry it as OBSERVED_EDGES_TRUNCATED.
func NewObserved(edges []ObservedEdge, truncation string) *Observed {
	by := map[[2]string]ObservedEdge{}
	for _, e := range edges {
		if e.From == "" || e.To == "" || e.From == e.To {
			continue
		}
		k := [2]string{e.From, e.To}
		cur := by[k]
		cur.From, cur.To = e.From, e.To
		cur.Calls += e.Calls
		if e.LastSeen.After(cur.LastSeen) {
			cur.LastSeen = e.LastSeen.UTC()
		}
		by[k] = cur
	}
	o := &Observed{services: map[string]bool{}, truncated: truncation != "", note: truncation}
	for _, k := range slices.SortedFunc(maps.Keys(by), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	}) {
		e := by[k]
		o.edges = append(o.edges, e)
		o.services[e.From], o.services[e.To] = true, true
	}
	h := sha256.New()
	for _, e := range o.edges {
		fmt.Fprintf(h, "%s\x00%s\x00", e.From, e.To)
		_ = binary.Write(h, binary.BigEndian, e.Calls)
		_ = binary.Write(h, binary.BigEndian, e.LastSeen.UnixNano())
	}
	h.Write([]byte(o.note))
	copy(o.hash[:], h.Sum(nil))
	return o
}

// Edges returns a copy of the set's edges, sorted by caller and callee.
func (o *Observed) Edges() []ObservedEdge {
	if o == nil {
		return nil
	}
	return slices.Clone(o.edges)
}

// Len is how many edges the set holds.
func (o *Observed) Len() int {
	if o == nil {
		return 0
	}
	return len(o.edges)
}

// SetObserved replaces the observed edges the next snapshot carries (nil:
// none configured). The set is part of the snapshot's identity: a new
// set is a new snapshot.
func (b *Builder) SetObserved(o *Observed) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.observed = o
	b.srcDone = true
	b.signal()
}

// observedState is a snapshot's observed set with its memos: a
// restricted view has its own, over the same set.
type observedState struct {
	set    *Observed
	once   sync.Once
	status *ObservedStatus
}

func newObservedState(o *Observed) *observedState {
	if o == nil {
		return nil
	}
	return &observedState{set: o}
}

// observedSet is the snapshot's observed set, nil when none is configured.
func (s *Snapshot) observedSet() *Observed {
	if s.obs == nil {
		return nil
	}
	return s.obs.set
}

// Observed returns the snapshot's observed edges, nil when none are
// configured.
func (s *Snapshot) Observed() *Observed { return s.observedSet() }

// observedAcc folds the observed set into the snapshot's accumulator for
// its id, without changing the accumulator the next batch starts from.
func observedAcc(acc [32]byte, o *Observed) [32]byte {
	if o == nil {
		return acc
	}
	for i := range acc {
		acc[i] ^= o.hash[i]
	}
	return acc
}

// ObservedRelationship is an observed edge as an answer shows it: between
// fleet services, with whether a declared dependency matches it.
type ObservedRelationship struct {
	FromService string    `json:"fromService"`
	ToService   string    `json:"toService"`
	Provenance  string    `json:"provenance"` // observed or declared+observed
	Calls       int64     `json:"calls"`
	LastSeen    time.Time `json:"lastSeen,omitzero"`
}

// resolvedObserved maps the set's edges onto the snapshot's services:
// each end names one service (by key or unique name) of this snapshot or
// view. Edges with an end that does not resolve are counted, and named
// only in an unrestricted snapshot: in a view, a name it cannot resolve
// may be a service the reader may not see.
func (s *Snapshot) resolvedObserved(set *Observed) (out []ObservedRelationship, unresolved []string) {
	if set == nil {
		return nil, nil
	}
	keyOf := map[string]string{}
	resolve := func(name string) string {
		if k, ok := keyOf[name]; ok {
			return k
		}
		k := ""
		if sv, _ := s.findService(name); sv != nil {
			k = sv.key
		}
		keyOf[name] = k
		return k
	}
	bad := map[string]bool{}
	for _, e := range set.edges {
		from, to := resolve(e.From), resolve(e.To)
		if from == "" || to == "" {
			if from == "" {
				bad[e.From] = true
			}
			if to == "" {
				bad[e.To] = true
			}
			continue
		}
		if from == to {
			continue
		}
		out = append(out, ObservedRelationship{FromService: from, ToService: to, Provenance: ProvenanceObserved, Calls: e.Calls, LastSeen: e.LastSeen})
	}
	return out, slices.Sorted(maps.Keys(bad))
}

// observedLimitations are what an answer that used observed edges says
// about them: names it could not resolve, and the set's truncation.
func (s *Snapshot) observedLimitations(set *Observed, unresolved []string) []Limitation {
	var lims []Limitation
	if set == nil {
		return []Limitation{{Code: LimitObservedUnavailable,
			Message: "observed edges were requested, but no observed-edge source is configured (kubepact mcp --traces, or the operator's trace intake): the answer uses declared edges only"}}
	}
	if len(unresolved) > 0 {
		msg := fmt.Sprintf("%d traced service names match no single service here; their observed edges are left out", len(unresolved))
		if len(unresolved) == 1 {
			msg = "1 traced service name matches no single service here; its observed edges are left out"
		}
		if s.view == "" {
			shown := unresolved
			if len(shown) > 10 {
				shown = shown[:10]
			}
			msg += ": " + strings.Join(shown, ", ")
			if len(unresolved) > len(shown) {
				msg += fmt.Sprintf(" and %d more", len(unresolved)-len(shown))
			}
		}
		lims = append(lims, Limitation{Code: LimitObservedIdentityUnresolved, Message: msg})
	}
	if set.truncated {
		lims = append(lims, Limitation{Code: LimitObservedTruncated, Message: set.note})
	}
	return lims
}

// declaredPair reports whether a resolved dependency edge of from's
// revisions points at to.
func (s *Snapshot) declaredPair(from, to string) bool {
	sv := s.service(from)
	if sv == nil {
		return false
	}
	for _, r := range sv.revs {
		for _, e := range r.Edges {
			if e.Type != EdgeDependency {
				continue
			}
			if rel := s.resolve(r, e); rel.Resolved && rel.ToService == to {
				return true
			}
		}
	}
	return false
}

// walkObserved lists the observed edges that touch a graph walk's nodes
// (index: node key -> place in the walk) in its direction: from a node
// for dependencies, into a node for dependents. at[i] is the place of the
// node observed[i] touches; lims say what the resolution left out.
func (s *Snapshot) walkObserved(dir string, index map[string]int) (observed []ObservedRelationship, at []int, lims []Limitation) {
	rels, unresolved := s.resolvedObserved(s.observedSet())
	observed = []ObservedRelationship{}
	for _, r := range rels {
		end := r.FromService
		if dir == DirectionDependents {
			end = r.ToService
		}
		node, ok := index[end]
		if !ok {
			continue
		}
		if s.declaredPair(r.FromService, r.ToService) {
			r.Provenance = ProvenanceDeclaredObserved
		}
		observed = append(observed, r)
		at = append(at, node)
	}
	return observed, at, s.observedLimitations(s.observedSet(), unresolved)
}

// Observed flags, pacto_fleet_status's reconciliation of declared
// against observed dependencies.
const (
	// CodeObservedUndeclared: a service is seen calling another it
	// declares no dependency on (a shadow dependency).
	CodeObservedUndeclared = "OBSERVED_NOT_DECLARED"
	// CodeDeclaredUnobserved: a service declares a dependency it is
	// never seen calling, although its own calls are traced.
	CodeDeclaredUnobserved = "DECLARED_NOT_OBSERVED"

	maxObservedFlags = 200
)

// ObservedFlag is one disagreement between declared and observed edges.
type ObservedFlag struct {
	Code        string    `json:"code"`
	FromService string    `json:"fromService"`
	ToService   string    `json:"toService"`
	Calls       int64     `json:"calls,omitempty"`
	LastSeen    time.Time `json:"lastSeen,omitzero"`
	Reason      string    `json:"reason"`
}

// ObservedStatus is pacto_fleet_status's observed section: present only
// when observed edges are configured.
type ObservedStatus struct {
	// Edges is how many observed edges resolve to services here; Matched
	// how many of them a declared dependency matches.
	Edges   int `json:"edges"`
	Matched int `json:"matched"`
	// Untraced counts declared dependencies whose caller is never seen in
	// the traces at all: nothing is known about them either way.
	Untraced  int            `json:"untraced"`
	Flags     []ObservedFlag `json:"flags"`
	Truncated bool           `json:"truncated"`
	// Limitations say which traced names did not resolve and whether the
	// set itself was truncated.
	Limitations []Limitation `json:"limitations,omitempty"`
}

// observedStatus reconciles the declared dependencies with the observed
// edges once per snapshot (or view): observed-but-undeclared, and
// declared-but-never-observed for callers whose calls are traced.
func (s *Snapshot) observedStatus() *ObservedStatus {
	if s.obs == nil {
		return nil
	}
	s.obs.once.Do(func() {
		rels, unresolved := s.resolvedObserved(s.obs.set)
		st := &ObservedStatus{Flags: []ObservedFlag{}, Limitations: s.observedLimitations(s.obs.set, unresolved)}
		seen := map[[2]string]bool{}
		traced := map[string]bool{}
		for _, r := range rels {
			seen[[2]string{r.FromService, r.ToService}] = true
			traced[r.FromService] = true
		}
		// A traced caller whose name resolves is traced even when none of
		// its edges does: the set's services say who was seen at all.
		for name := range s.obs.set.services {
			if sv, _ := s.findService(name); sv != nil {
				traced[sv.key] = true
			}
		}
		add := func(f ObservedFlag) {
			if len(st.Flags) >= maxObservedFlags {
				st.Truncated = true
				return
			}
			st.Flags = append(st.Flags, f)
		}
		st.Edges = len(rels)
		for _, r := range rels {
			if s.declaredPair(r.FromService, r.ToService) {
				st.Matched++
				continue
			}
			add(ObservedFlag{Code: CodeObservedUndeclared, FromService: r.FromService, ToService: r.ToService, Calls: r.Calls, LastSeen: r.LastSeen,
				Reason: fmt.Sprintf("%s is seen calling %s (%s) but declares no dependency on it", r.FromService, r.ToService, calls(r.Calls))})
		}
		for k := range s.order.all() {
			sv := s.service(k)
			if sv == nil {
				continue
			}
			done := map[string]bool{}
			for _, r := range sv.revs {
				for _, e := range r.Edges {
					if e.Type != EdgeDependency {
						continue
					}
					rel := s.resolve(r, e)
					if !rel.Resolved || done[rel.ToService] || rel.ToService == sv.key {
						continue
					}
					done[rel.ToService] = true
					switch {
					case seen[[2]string{sv.key, rel.ToService}]:
					case !traced[sv.key]:
						st.Untraced++
					default:
						add(ObservedFlag{Code: CodeDeclaredUnobserved, FromService: sv.key, ToService: rel.ToService,
							Reason: fmt.Sprintf("%s declares a dependency on %s but is never seen calling it, although its calls are traced", sv.key, rel.ToService)})
					}
				}
			}
		}
		s.obs.status = st
	})
	out := *s.obs.status
	out.Flags = slices.Clone(out.Flags)
	out.Limitations = slices.Clone(out.Limitations)
	return &out
}

// observedConsumers folds the observed callers of sv into an impact
// answer: a declared direct consumer also seen calling is corroborated;
// a caller that declares nothing is a direct "shadow" consumer whose
// verdict is unknown (no range says whether it takes the new version).
func (s *Snapshot) observedConsumers(w *impactWalk, sc *walkScratch, sv *service, set *Observed, maxConsumers int, truncated *bool, owners map[string]bool) []Limitation {
	at := sc.at
	rels, unresolved := s.resolvedObserved(set)
	for _, r := range rels {
		if r.ToService != sv.key {
			continue
		}
		csv := s.service(r.FromService)
		// The changed service itself (-1) is not among the consumers: a
		// call it makes to itself lists it, as a caller it is.
		if i, ok := at.get(csv.id); ok && i >= 0 {
			c := &w.consumers[i]
			c.Provenance = ProvenanceDeclaredObserved
			if c.Direct {
				c.Confidence = ConfidenceCorroborated
			}
			continue
		}
		if len(w.consumers) >= maxConsumers {
			*truncated = true
			break
		}
		c := Consumer{Service: csv.key, Domain: csv.domain, Depth: 1, Direct: true,
			CompatibilityVerdict: VerdictUnknown, Provenance: ProvenanceObserved, Confidence: ConfidenceObserved,
			Risk: RiskUnknown, Status: csv.status, Targets: csv.targets,
			RiskReason: fmt.Sprintf("it is seen calling %s (%s) but declares no dependency on it, so no range says whether it takes %s", sv.key, calls(r.Calls), w.res.NewVersion)}
		if len(csv.owners) > 0 {
			c.Owner = csv.owners[0]
			for _, o := range csv.owners {
				owners[o] = true
			}
		}
		at.set(csv.id, int32(len(w.consumers)))
		w.consumers = append(w.consumers, c)
		sc.parent = append(sc.parent, -1)
		sc.svc = append(sc.svc, csv.id)
	}
	return s.observedLimitations(set, unresolved)
}

func calls(n int64) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}
