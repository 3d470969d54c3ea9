package fleetgraph

import (
	"iter"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// chunkSize is the usual length of a sorted chunk; a chunk splits when it
// doubles. Changing one key copies one chunk and the chunk list (one
// pointer per chunkSize keys): for a 30,000-key list about 6 KiB.
const chunkSize = 128

// sorted is a persistent map from string keys to V, kept in key order in
// immutable chunks. It serves paging in key order (the service order),
// the search posting lists (V is struct{}, which costs no memory) and the
// attention lists. Snapshots share every chunk a change did not touch.
type sorted[V any] struct {
	chunks []*chunk[V]
	n      int
}

type chunk[V any] struct {
	keys []string
	vals []V
	// gen is the edit that created the chunk: that edit may still change
	// it in place; any other must copy it first.
	gen uint64
	// text is the search's copy of a string chunk's values, built on the
	// first text search that reads the chunk once it is committed (see
	// chunkText). An edit copies the chunk before changing it, and the
	// copy starts without one, so only changed chunks are built again.
	text atomic.Pointer[chunkText]
}

func (s sorted[V]) len() int { return s.n }

// chunkFor is the index of the first chunk whose last key is >= k, or
// len(chunks) when k is beyond them all.
func chunkFor[V any](chunks []*chunk[V], k string) int {
	return sort.Search(len(chunks), func(i int) bool { c := chunks[i].keys; return c[len(c)-1] >= k })
}

// all yields every entry in key order.
func (s sorted[V]) all() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for _, c := range s.chunks {
			for j, k := range c.keys {
				if !yield(k, c.vals[j]) {
					return
				}
			}
		}
	}
}

// editGen numbers edits, so an edit knows which chunks it made itself.
var editGen atomic.Uint64

// sortedTx batches changes to a sorted map: the chunk list and each chunk
// are copied at most once per edit, then changed in place.
type sortedTx[V any] struct {
	chunks    []*chunk[V]
	n         int
	gen       uint64
	ownsChunk bool // chunks is this edit's own copy
}

func (s sorted[V]) edit() *sortedTx[V] {
	return &sortedTx[V]{chunks: s.chunks, n: s.n, gen: editGen.Add(1)}
}

func (tx *sortedTx[V]) commit() sorted[V] { return sorted[V]{chunks: tx.chunks, n: tx.n} }

func (tx *sortedTx[V]) len() int { return tx.n }

// own returns chunk ci, copied into this edit if it was not already.
func (tx *sortedTx[V]) own(ci int) *chunk[V] {
	if !tx.ownsChunk {
		tx.chunks = slices.Clone(tx.chunks)
		tx.ownsChunk = true
	}
	c := tx.chunks[ci]
	if c.gen != tx.gen {
		c = &chunk[V]{keys: slices.Clone(c.keys), vals: slices.Clone(c.vals), gen: tx.gen}
		tx.chunks[ci] = c
	}
	return c
}

// set inserts k or replaces its value.
func (tx *sortedTx[V]) set(k string, v V) {
	if len(tx.chunks) == 0 {
		tx.chunks = []*chunk[V]{{keys: []string{k}, vals: []V{v}, gen: tx.gen}}
		tx.ownsChunk = true
		tx.n = 1
		return
	}
	ci := min(chunkFor(tx.chunks, k), len(tx.chunks)-1)
	c := tx.own(ci)
	j, found := slices.BinarySearch(c.keys, k)
	if found {
		c.vals[j] = v
		return
	}
	c.keys = slices.Insert(c.keys, j, k)
	c.vals = slices.Insert(c.vals, j, v)
	tx.n++
	if len(c.keys) > 2*chunkSize {
		tail := &chunk[V]{keys: slices.Clone(c.keys[chunkSize:]), vals: slices.Clone(c.vals[chunkSize:]), gen: tx.gen}
		c.keys, c.vals = slices.Clip(c.keys[:chunkSize]), slices.Clip(c.vals[:chunkSize])
		tx.chunks = slices.Insert(tx.chunks, ci+1, tail)
	}
}

// del removes k; a missing key is not an error.
func (tx *sortedTx[V]) del(k string) {
	ci := chunkFor(tx.chunks, k)
	if ci == len(tx.chunks) {
		return
	}
	if _, found := slices.BinarySearch(tx.chunks[ci].keys, k); !found {
		return
	}
	c := tx.own(ci)
	j, _ := slices.BinarySearch(c.keys, k)
	c.keys = slices.Delete(c.keys, j, j+1)
	c.vals = slices.Delete(c.vals, j, j+1)
	tx.n--
	if len(c.keys) == 0 {
		tx.chunks = slices.Delete(tx.chunks, ci, ci+1)
	}
}

// delPrefix removes every key that starts with p.
func (tx *sortedTx[V]) delPrefix(p string) {
	for {
		ci := chunkFor(tx.chunks, p)
		if ci == len(tx.chunks) {
			return
		}
		c := tx.chunks[ci]
		j, _ := slices.BinarySearch(c.keys, p)
		if !strings.HasPrefix(c.keys[j], p) {
			return
		}
		tx.del(c.keys[j])
	}
}

// scan walks a sorted map forward: next steps one key, seek jumps to the
// first key >= k. Both only move forward, which is what a merge of
// posting lists needs.
type scan[V any] struct {
	chunks []*chunk[V]
	ci, j  int
}

func (s sorted[V]) scan() *scan[V] { return &scan[V]{chunks: s.chunks} }

func (c *scan[V]) valid() bool { return c.ci < len(c.chunks) }

func (c *scan[V]) key() string { return c.chunks[c.ci].keys[c.j] }

func (c *scan[V]) next() {
	c.j++
	if c.j == len(c.chunks[c.ci].keys) {
		c.ci, c.j = c.ci+1, 0
	}
}

// seek moves to the first key >= k, never backwards. Within the current
// chunk it gallops from the current position, so a merge of two lists of
// similar density costs a few comparisons per step.
func (c *scan[V]) seek(k string) {
	// Two lists of similar density mostly meet within a step or two: try
	// those before galloping.
	for range 3 {
		if !c.valid() || c.key() >= k {
			return
		}
		c.next()
	}
	if !c.valid() || c.key() >= k {
		return
	}
	keys := c.chunks[c.ci].keys
	if keys[len(keys)-1] < k {
		c.ci += 1 + chunkFor(c.chunks[c.ci+1:], k)
		if !c.valid() {
			return
		}
		keys = c.chunks[c.ci].keys
		c.j, _ = slices.BinarySearch(keys, k)
		return
	}
	lo, step := c.j, 1 // keys[lo] < k <= keys[last]
	hi := lo + step
	for hi < len(keys)-1 && keys[hi] < k {
		lo, step = hi, step*2
		hi = lo + step
	}
	hi = min(hi, len(keys)-1)
	c.j = lo + 1 + sort.SearchStrings(keys[lo+1:hi+1], k)
}
