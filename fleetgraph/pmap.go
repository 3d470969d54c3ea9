package fleetgraph

import (
	"iter"
	"slices"
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
