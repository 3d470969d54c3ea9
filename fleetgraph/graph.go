package fleetgraph

import (
	"slices"
	"strings"
)

// Graph directions.
const (
	DirectionDependencies = "dependencies"
	DirectionDependents   = "dependents"
)

// Graph node caps.
const (
	DefaultMaxNodes = 500
	MaxMaxNodes     = 5000
)

// GraphQuery roots a traversal at a service (all its revisions), a
// revision (exactly its edges) or a target (its linked revision).
type GraphQuery struct {
	Service    string `json:"service,omitempty"`
	Revision   string `json:"revision,omitempty"`
	Target     string `json:"target,omitempty"`
	Direction  string `json:"direction,omitempty"`
	Transitive bool   `json:"transitive,omitempty"`
	MaxDepth   int    `json:"max_depth,omitempty"`
	MaxNodes   int    `json:"max_nodes,omitempty"`
	// MaxBytes is the answer's byte budget (0: DefaultMaxBytes); Cursor
	// continues a listing that did not fit (NextCursor of the page
	// before). Neither is part of the query a cursor is bound to.
	MaxBytes int    `json:"max_bytes,omitempty"`
	Cursor   string `json:"cursor,omitempty"`
	// IncludeObserved adds the observed (traced) edges that touch the
	// graph's nodes (observed.go).
	IncludeObserved bool `json:"include_observed,omitempty"`
}

// GraphNode is a service reached by the traversal.
type GraphNode struct {
	Key   string   `json:"key"`
	Name  string   `json:"name"`
	Depth int      `json:"depth"`
	Path  []string `json:"path"`
}

// GraphResult is pacto_fleet_graph's answer.
type GraphResult struct {
	Meta Meta `json:"meta"`
	Miss
	Root       string         `json:"root"`
	Revision   string         `json:"revision,omitempty"`
	Aggregated bool           `json:"aggregated"`
	Direction  string         `json:"direction"`
	Nodes      []GraphNode    `json:"nodes"`
	Edges      []Relationship `json:"edges"`
	Cycles     [][]string     `json:"cycles"`
	Unresolved []Relationship `json:"unresolved"`
	// Truncated says the walk stopped at max_nodes.
	Truncated bool `json:"truncated"`
	// Total counts the whole walk's lists, ByDepth its nodes per depth
	// (the root is depth 0); the lists above are the page that fits the
	// byte budget, nodes nearest the root first, each node with the edges
	// that lead to it. Remaining counts what later pages hold and
	// NextCursor reads them.
	Total      GraphTotals  `json:"total"`
	ByDepth    []DepthCount `json:"byDepth"`
	Remaining  *GraphTotals `json:"remaining,omitempty"`
	NextCursor string       `json:"nextCursor,omitempty"`
	// Observed is set with IncludeObserved: the observed edges from (or,
	// for dependents, into) the page's nodes.
	Observed []ObservedRelationship `json:"observed,omitempty"`
}

// Graph walks dependencies or dependents breadth first, so each node's depth
// and path are its shortest; an edge back to a node on its own path is a
// cycle. It stops at MaxDepth (0: unlimited; 1 unless Transitive) and at
// MaxNodes, saying so with truncated.
func (s *Snapshot) Graph(q GraphQuery) (*GraphResult, error) {
	roots := 0
	for _, v := range []string{q.Service, q.Revision, q.Target} {
		if v != "" {
			roots++
		}
	}
	if roots != 1 {
		return nil, invalid("service", "provide exactly one of 'service', 'revision' or 'target'")
	}
	dir := q.Direction
	if dir == "" {
		dir = DirectionDependencies
	}
	if dir != DirectionDependencies && dir != DirectionDependents {
		return nil, invalid("direction", "direction %q: want %s or %s", q.Direction, DirectionDependencies, DirectionDependents)
	}
	if q.MaxDepth < 0 {
		return nil, invalid("max_depth", "max_depth %d: want 0 (unlimited) or more", q.MaxDepth)
	}
	if q.MaxNodes < 0 || q.MaxNodes > MaxMaxNodes {
		return nil, invalid("max_nodes", "max_nodes %d: want 1..%d", q.MaxNodes, MaxMaxNodes)
	}
	budget, err := checkMaxBytes(q.MaxBytes)
	if err != nil {
		return nil, err
	}
	pq := q
	pq.MaxBytes, pq.Cursor = 0, ""
	filter := s.filterKey(pq)
	offset, err := s.pageCursor(q.Cursor, filter)
	if err != nil {
		return nil, err
	}
	maxNodes := q.MaxNodes
	if maxNodes == 0 {
		maxNodes = DefaultMaxNodes
	}
	maxDepth := q.MaxDepth
	if !q.Transitive {
		maxDepth = 1
	}
	res := &GraphResult{Direction: dir, Nodes: []GraphNode{}, Edges: []Relationship{}, Cycles: [][]string{}, Unresolved: []Relationship{}, ByDepth: []DepthCount{}}

	// Find the root service and the revisions whose edges start the walk.
	var root *service
	var rootRevs []string // nil: every revision of root
	var lims []Limitation
	switch {
	case q.Service != "":
		sv, miss := s.findService(q.Service)
		if sv == nil {
			res.Miss, res.Root, res.Meta = miss, q.Service, s.meta(nil)
			return res, nil
		}
		root, rootRevs = sv, sv.revisions
		res.Aggregated = len(sv.revisions) > 1
	case q.Revision != "":
		r := s.revision(q.Revision)
		if r == nil {
			res.Root, res.Meta = q.Revision, s.meta(nil)
			res.Miss = Miss{Reason: "revision " + q.Revision + " is not in the fleet snapshot", Candidates: s.suggestRevisions(q.Revision)}
			return res, nil
		}
		root, rootRevs, res.Revision = s.service(r.ServiceKey()), []string{q.Revision}, q.Revision
	default:
		t, miss := s.findTarget(q.Target)
		if t == nil {
			res.Miss, res.Root, res.Meta = miss, q.Target, s.meta(nil)
			return res, nil
		}
		rev, _, _ := s.link(t)
		root, res.Revision = s.service(t.ServiceKey()), rev
		// An unlinked target has no edges of its own: an empty, non-nil
		// list keeps the walk from taking every revision of the service.
		rootRevs = []string{}
		if rev != "" {
			rootRevs = []string{rev}
		} else {
			lims = append(lims, linkLimitation(s.targetView(t)))
		}
		if root == nil {
			res.Found, res.Root = true, t.ServiceKey()
			res.Meta = s.meta(lims)
			return res, nil
		}
	}
	res.Found, res.Root = true, root.key

	type item struct {
		sv   *service
		revs []string // nil: every revision of sv
		node int
	}
	index := map[string]int{root.key: 0}
	res.Nodes = append(res.Nodes, GraphNode{Key: root.key, Name: root.name, Depth: 0, Path: []string{root.key}})
	queue := []item{{sv: root, revs: rootRevs, node: 0}}
	seenCycle := map[string]bool{}
	// Where each listed item belongs, for paging (see graphEntry).
	var edgeTo []string
	var edgeFrom, cycleAt, unresolvedAt []int
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		node := res.Nodes[it.node]
		if maxDepth > 0 && node.Depth >= maxDepth {
			continue
		}
		var rels []Relationship
		if dir == DirectionDependencies {
			revs := it.revs
			if revs == nil {
				revs = it.sv.revisions
			}
			for _, k := range revs {
				if r, targets := s.revisionEdges(k); r != nil {
					from := r.ServiceKey()
					for i, e := range r.Edges {
						rels = append(rels, s.resolveFrom(from, k, e, targets[i]))
					}
				}
			}
		} else {
			for _, rel := range s.inbound(it.sv) {
				if it.node == 0 && q.Service == "" && rel.ResolvedRevision != "" && !slices.Contains(it.revs, rel.ResolvedRevision) {
					continue // pinned to another revision of the root
				}
				rels = append(rels, rel)
			}
		}
		for _, rel := range rels {
			if !rel.Resolved {
				res.Unresolved = append(res.Unresolved, rel)
				unresolvedAt = append(unresolvedAt, it.node)
				continue
			}
			res.Edges = append(res.Edges, rel)
			next := rel.ToService
			if dir == DirectionDependents {
				next = rel.FromService
			}
			edgeTo, edgeFrom = append(edgeTo, next), append(edgeFrom, it.node)
			if i := slices.Index(node.Path, next); i >= 0 {
				cyc := append(slices.Clone(node.Path[i:]), next)
				if id := canonicalCycle(cyc); !seenCycle[id] {
					seenCycle[id] = true
					res.Cycles = append(res.Cycles, cyc)
					cycleAt = append(cycleAt, it.node)
				}
				continue
			}
			if _, seen := index[next]; seen {
				continue
			}
			if len(res.Nodes) >= maxNodes {
				res.Truncated = true
				continue
			}
			sv := s.service(next)
			if sv == nil {
				continue
			}
			index[next] = len(res.Nodes)
			res.Nodes = append(res.Nodes, GraphNode{Key: next, Name: sv.name, Depth: node.Depth + 1, Path: append(slices.Clone(node.Path), next)})
			queue = append(queue, item{sv: sv, node: len(res.Nodes) - 1})
		}
	}
	if res.Truncated {
		lims = append(lims, Limitation{Code: LimitResultTruncated, Message: "the graph reached max_nodes; raise it or lower max_depth"})
	}
	entries := make([]graphEntry, 0, len(res.Nodes)+len(res.Edges)+len(res.Cycles)+len(res.Unresolved))
	for i := range res.Nodes {
		entries = append(entries, graphEntry{owner: i, kind: entryNode, i: i})
	}
	for i, to := range edgeTo {
		// The later of its two nodes: a page's edges join nodes on that
		// page or earlier ones. (A node left out at max_nodes, or not a
		// service, has no place: the edge goes with its origin.)
		owner := edgeFrom[i]
		if to, ok := index[to]; ok {
			owner = max(owner, to)
		}
		entries = append(entries, graphEntry{owner: owner, kind: entryEdge, i: i})
	}
	for i, at := range cycleAt {
		entries = append(entries, graphEntry{owner: at, kind: entryCycle, i: i})
	}
	for i, at := range unresolvedAt {
		entries = append(entries, graphEntry{owner: at, kind: entryUnresolved, i: i})
	}
	var obsLims []Limitation
	if q.IncludeObserved {
		// Observed edges are entries like the others: each goes with the
		// node of the walk it touches, so it is counted in the budget and
		// paged with that node.
		var at []int
		res.Observed, at, obsLims = s.walkObserved(dir, index)
		for i, owner := range at {
			entries = append(entries, graphEntry{owner: owner, kind: entryObserved, i: i})
		}
	}
	slices.SortStableFunc(entries, func(a, b graphEntry) int {
		if a.owner != b.owner {
			return a.owner - b.owner
		}
		return a.kind - b.kind
	})
	s.pageGraph(res, entries, lims, obsLims, pageSpec{budget: budget, offset: offset, filter: filter})
	return res, nil
}

// pageSpec is one page request: the budget, where the page starts and
// the query its cursor is bound to.
type pageSpec struct {
	budget, offset int
	filter         string
}

// unresolvedLimitation is the limitation an unresolved edge on a page
// adds to the answer's meta.
func unresolvedLimitation(rel Relationship) Limitation {
	return Limitation{Code: LimitUnresolvedDep, Message: rel.FromRevision + " → " + rel.To + ": " + rel.Reason, Subject: rel.FromRevision}
}

// pageGraph replaces res's lists by the page of entries from the offset
// that fits the budget, and sets the totals, the summary and the cursor.
// Meta names the unresolved edges of the page (every page says the walk
// was truncated at max_nodes, when it was), then tail (what the observed
// edges' resolution left out).
func (s *Snapshot) pageGraph(res *GraphResult, entries []graphEntry, lims, tail []Limitation, p pageSpec) {
	nodes, edges, cycles, unresolved, observed := res.Nodes, res.Edges, res.Cycles, res.Unresolved, res.Observed
	res.Total = GraphTotals{Nodes: len(nodes), Edges: len(edges), Cycles: len(cycles), Unresolved: len(unresolved), Observed: len(observed)}
	for _, n := range nodes {
		if len(res.ByDepth) == 0 || res.ByDepth[len(res.ByDepth)-1].Depth != n.Depth {
			res.ByDepth = append(res.ByDepth, DepthCount{Depth: n.Depth})
		}
		res.ByDepth[len(res.ByDepth)-1].Count++ // breadth first: depths ascend
	}
	res.Nodes, res.Edges, res.Cycles, res.Unresolved = []GraphNode{}, []Relationship{}, [][]string{}, []Relationship{}
	if observed != nil {
		res.Observed = []ObservedRelationship{}
	}
	res.Meta = s.meta(append(slices.Clip(lims), tail...))
	pg := newPager(p.budget, res)
	end := min(p.offset, len(entries))
	for _, e := range entries[end:] {
		var v any
		var lim *Limitation
		switch e.kind {
		case entryNode:
			v = nodes[e.i]
		case entryEdge:
			v = edges[e.i]
		case entryCycle:
			v = cycles[e.i]
		case entryObserved:
			v = observed[e.i]
		default:
			l := unresolvedLimitation(unresolved[e.i])
			v, lim = unresolved[e.i], &l
		}
		n := encodedLen(v)
		if lim != nil {
			n += encodedLen(lim) + 1
		}
		if !pg.take(n) {
			break
		}
		end++
		switch e.kind {
		case entryNode:
			res.Nodes = append(res.Nodes, nodes[e.i])
		case entryEdge:
			res.Edges = append(res.Edges, edges[e.i])
		case entryCycle:
			res.Cycles = append(res.Cycles, cycles[e.i])
		case entryObserved:
			res.Observed = append(res.Observed, observed[e.i])
		default:
			res.Unresolved = append(res.Unresolved, unresolved[e.i])
			lims = append(lims, *lim)
		}
	}
	if res.NextCursor = s.nextPage(p.filter, end, len(entries)); res.NextCursor != "" {
		var rest GraphTotals
		for _, e := range entries[end:] {
			switch e.kind {
			case entryNode:
				rest.Nodes++
			case entryEdge:
				rest.Edges++
			case entryCycle:
				rest.Cycles++
			case entryObserved:
				rest.Observed++
			default:
				rest.Unresolved++
			}
		}
		res.Remaining = &rest
	}
	res.Meta = s.meta(append(lims, tail...))
}

// canonicalCycle identifies a cycle regardless of where it was entered.
func canonicalCycle(c []string) string {
	ring := c[:len(c)-1]
	best := 0
	for i := range ring {
		if ring[i] < ring[best] {
			best = i
		}
	}
	rot := append(slices.Clone(ring[best:]), ring[:best]...)
	return strings.Join(rot, "\x00")
}

func (s *Snapshot) suggestRevisions(q string) []string {
	return pick(q, func(yield func(string, string) bool) {
		for k := range s.revisions.all() {
			if !yield(k, k) {
				return
			}
		}
	})
}
