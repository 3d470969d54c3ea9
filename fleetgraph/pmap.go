package fleetgraph

import (
	"iter"
	"slices"
	"sort"
)

// nShards is the number of copy-on-write shards of a pmap. A change copies
// the shard array (nShards pointers) and one shard: with 30,000 targets a
// shard holds about 120 entries, so publishing one change copies about 2 KiB
// of pointers and one small map instead of the fleet.
const nShards = 256

// pmap is a persistent map: an immutable value whose updates return a new
// pmap sharing every untouched shard with the old one. The zero value is
// empty. Values are pointers or small immutable slices, never mutated once
// stored.
type pmap[V any] struct {
	shards *[nShards]map[string]V
	n      int
}

func shardOf(k string) int {
	// FNV-1a; the sharding only needs to be stable within a process.
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h ^= uint32(k[i])
		h *= 16777619
	}
	return int(h % nShards)
}

func (m pmap[V]) get(k string) (V, bool) {
	var zero V
	if m.shards == nil {
		return zero, false
	}
	v, ok := m.shards[shardOf(k)][k]
	return v, ok
}

func (m pmap[V]) len() int { return m.n }

// all yields every entry, in no particular order.
func (m pmap[V]) all() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		if m.shards == nil {
			return
		}
		for _, sh := range m.shards {
			for k, v := range sh {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

// pmapTx batches updates to a pmap: each shard is copied at most once per
// batch, however many of its keys change.
type pmapTx[V any] struct {
	shards [nShards]map[string]V
	owned  [nShards]bool
	n      int
}

func (m pmap[V]) edit() *pmapTx[V] {
	tx := &pmapTx[V]{n: m.n}
	if m.shards != nil {
		tx.shards = *m.shards
	}
	return tx
}

func (tx *pmapTx[V]) get(k string) (V, bool) {
	v, ok := tx.shards[shardOf(k)][k]
	return v, ok
}

func (tx *pmapTx[V]) own(i int) map[string]V {
	if !tx.owned[i] {
		n := make(map[string]V, len(tx.shards[i])+1)
		for k, v := range tx.shards[i] {
			n[k] = v
		}
		tx.shards[i] = n
		tx.owned[i] = true
	}
	return tx.shards[i]
}

func (tx *pmapTx[V]) set(k string, v V) {
	sh := tx.own(shardOf(k))
	if _, ok := sh[k]; !ok {
		tx.n++
	}
	sh[k] = v
}

func (tx *pmapTx[V]) del(k string) {
	i := shardOf(k)
	if _, ok := tx.shards[i][k]; !ok {
		return
	}
	delete(tx.own(i), k)
	tx.n--
}

func (tx *pmapTx[V]) commit() pmap[V] {
	sh := tx.shards
	return pmap[V]{shards: &sh, n: tx.n}
}

// chunkSize bounds a sortedKeys chunk; an insert copies one chunk and the
// chunk list (n/chunkSize pointers).
const chunkSize = 128

// sortedKeys is a persistent sorted set of strings kept in immutable
// chunks, for paging in key order without sorting per query.
type sortedKeys struct {
	chunks [][]string
	n      int
}

func (s sortedKeys) len() int { return s.n }

// chunkFor is the index of the chunk k belongs in.
func (s sortedKeys) chunkFor(k string) int {
	i := sort.Search(len(s.chunks), func(i int) bool { c := s.chunks[i]; return c[len(c)-1] >= k })
	if i == len(s.chunks) && i > 0 {
		i--
	}
	return i
}

func (s sortedKeys) insert(k string) sortedKeys {
	if len(s.chunks) == 0 {
		return sortedKeys{chunks: [][]string{{k}}, n: 1}
	}
	ci := s.chunkFor(k)
	c := s.chunks[ci]
	j, found := slices.BinarySearch(c, k)
	if found {
		return s
	}
	nc := make([]string, 0, len(c)+1)
	nc = append(append(append(nc, c[:j]...), k), c[j:]...)
	chunks := make([][]string, 0, len(s.chunks)+1)
	chunks = append(chunks, s.chunks[:ci]...)
	if len(nc) > 2*chunkSize {
		chunks = append(chunks, nc[:chunkSize:chunkSize], nc[chunkSize:])
	} else {
		chunks = append(chunks, nc)
	}
	chunks = append(chunks, s.chunks[ci+1:]...)
	return sortedKeys{chunks: chunks, n: s.n + 1}
}

func (s sortedKeys) remove(k string) sortedKeys {
	if len(s.chunks) == 0 {
		return s
	}
	ci := s.chunkFor(k)
	c := s.chunks[ci]
	j, found := slices.BinarySearch(c, k)
	if !found {
		return s
	}
	chunks := make([][]string, 0, len(s.chunks))
	chunks = append(chunks, s.chunks[:ci]...)
	if len(c) > 1 {
		chunks = append(chunks, slices.Delete(slices.Clone(c), j, j+1))
	}
	chunks = append(chunks, s.chunks[ci+1:]...)
	return sortedKeys{chunks: chunks, n: s.n - 1}
}

// after yields the keys greater than k ("" yields all), in order.
func (s sortedKeys) after(k string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		if k != "" {
			start = s.chunkFor(k)
		}
		for ci := start; ci < len(s.chunks); ci++ {
			c := s.chunks[ci]
			j := 0
			if ci == start && k != "" {
				j, _ = slices.BinarySearch(c, k)
				for j < len(c) && c[j] <= k {
					j++
				}
			}
			for _, key := range c[j:] {
				if !yield(key) {
					return
				}
			}
		}
	}
}

// withKey returns a sorted slice holding k; s is not changed.
func withKey(s []string, k string) []string {
	i, found := slices.BinarySearch(s, k)
	if found {
		return s
	}
	out := make([]string, 0, len(s)+1)
	return append(append(append(out, s[:i]...), k), s[i:]...)
}

// withoutKey returns a sorted slice without k (nil when empty); s is not
// changed.
func withoutKey(s []string, k string) []string {
	i, found := slices.BinarySearch(s, k)
	if !found {
		return s
	}
	if len(s) == 1 {
		return nil
	}
	out := make([]string, 0, len(s)-1)
	return append(append(out, s[:i]...), s[i+1:]...)
}
