package fleetgraph

import (
	"encoding/json"
	"fmt"
)

// Answer byte budgets. A graph, impact or status answer lists what fits in
// its budget (the JSON of its lists and envelope; DefaultMaxBytes unless
// the query says otherwise), with totals and a summary of the whole answer
// and a cursor, bound to the snapshot, for the rest. An agent reads each
// answer whole: a 1 MB list of dependents is hundreds of thousands of
// tokens it cannot use, while counts by depth or risk and the first
// services are what it acts on.
const (
	DefaultMaxBytes = 64 << 10
	MinMaxBytes     = 4 << 10
	MaxMaxBytes     = 1 << 20
)

// pageReserve is kept free of a budget for what the server adds around an
// answer (the snapshot pin and the text line).
const pageReserve = 1 << 10

// checkMaxBytes validates a query's max_bytes and returns the budget.
func checkMaxBytes(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultMaxBytes, nil
	case n < MinMaxBytes || n > MaxMaxBytes:
		return 0, invalid("max_bytes", "max_bytes %d: want %d..%d (0: the default %d)", n, MinMaxBytes, MaxMaxBytes, DefaultMaxBytes)
	}
	return n, nil
}

// pager fills a page up to a byte budget. The first entry always fits, so
// a page makes progress however small the budget.
type pager struct {
	left  int
	taken int
}

// newPager starts a page of budget bytes, of which the answer without its
// paged lists (base) already takes its share.
func newPager(budget int, base any) *pager {
	return &pager{left: budget - pageReserve - encodedLen(base)}
}

// take reports whether an entry of n bytes fits, and counts it if so.
func (p *pager) take(n int) bool {
	n++ // the comma between list entries
	if p.taken > 0 && n > p.left {
		p.left = 0
		return false
	}
	p.left -= n
	p.taken++
	return true
}

// encodedLen is the length of v's JSON encoding.
func encodedLen(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(raw)
}

// pageCursor decodes a paged answer's cursor for filter, or starts at 0.
func (s *Snapshot) pageCursor(token, filter string) (int, error) {
	if token == "" {
		return 0, nil
	}
	c, err := s.checkCursor(token, filter)
	if err != nil {
		return 0, err
	}
	return c.Offset, nil
}

// nextPage is the cursor for the entries from offset on, or "" at the end.
func (s *Snapshot) nextPage(filter string, offset, total int) string {
	if offset >= total {
		return ""
	}
	return encodeCursor(cursor{Snapshot: s.id, Filter: filter, Offset: offset})
}

// DepthCount is how many services a graph or impact answer reaches at one
// depth.
type DepthCount struct {
	Depth int `json:"depth"`
	Count int `json:"count"`
}

// GraphTotals counts a graph answer's lists.
type GraphTotals struct {
	Nodes      int `json:"nodes"`
	Edges      int `json:"edges"`
	Cycles     int `json:"cycles"`
	Unresolved int `json:"unresolved"`
	// Observed counts the observed edges (include_observed only).
	Observed int `json:"observed,omitempty"`
}

func (t GraphTotals) String() string {
	s := fmt.Sprintf("%d nodes, %d edges, %d cycles, %d unresolved", t.Nodes, t.Edges, t.Cycles, t.Unresolved)
	if t.Observed > 0 {
		s += fmt.Sprintf(", %d observed", t.Observed)
	}
	return s
}

// Graph entry kinds, in the order a node's entries are listed.
const (
	entryNode = iota
	entryEdge
	entryCycle
	entryUnresolved
	entryObserved
)

// graphEntry is one item of a graph answer's lists: which list (kind),
// its place there (i) and the node it belongs with (owner: a node itself;
// an edge, the later of the two nodes it joins; a cycle or an unresolved
// edge, the node whose expansion found it; an observed edge, the node it
// touches).
type graphEntry struct {
	owner, kind, i int
}
