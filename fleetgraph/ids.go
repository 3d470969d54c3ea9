package fleetgraph

import (
	"iter"
	"slices"
)

// svcID is a service's dense number, handed out by the batch that creates
// the service and kept for its whole life: a later batch that changes the
// service's records keeps the number, so an inbound-index entry made
// batches ago still names its declaring service by it. A deleted
// service's number is reused by a later new service; within one snapshot
// a number names one service at most.
//
// Why numbers: a walk over a hub's consumers marks each service it
// reaches and reads its record once per inbound edge. With a number that
// is a slice index (places, svcTable.at) instead of a hash of a key of
// some forty bytes in a map.
type svcID int32

// tableShift sizes a numbered table's chunk: 256 values.
const tableShift = 8

// numbered is an immutable array indexed by service number, in chunks,
// shared with the next snapshot but for the chunks a batch changed (copy
// on write), the way pmap shares its shards. The zero value is empty.
type numbered[V any] struct {
	chunks []*[1 << tableShift]V
}

// at is the value numbered id; the zero value past the end.
func (t numbered[V]) at(id svcID) V {
	var zero V
	c := int(id) >> tableShift
	if id < 0 || c >= len(t.chunks) {
		return zero
	}
	return t.chunks[c][id&(1<<tableShift-1)]
}

// all yields every number whose value is not the zero value, in order.
func (t numbered[V]) all(isZero func(V) bool) iter.Seq2[svcID, V] {
	return func(yield func(svcID, V) bool) {
		for c, ch := range t.chunks {
			for i, v := range ch {
				if !isZero(v) && !yield(svcID(c<<tableShift|i), v) {
					return
				}
			}
		}
	}
}

// numberedTx is one batch's edit of a numbered table.
type numberedTx[V any] struct {
	chunks []*[1 << tableShift]V
	owned  map[int]bool // chunks this batch copied or made
}

func (t numbered[V]) edit() *numberedTx[V] {
	return &numberedTx[V]{chunks: slices.Clone(t.chunks), owned: map[int]bool{}}
}

func (tx *numberedTx[V]) at(id svcID) V { return numbered[V]{chunks: tx.chunks}.at(id) }

func (tx *numberedTx[V]) put(id svcID, v V) {
	c := int(id) >> tableShift
	for c >= len(tx.chunks) {
		tx.chunks = append(tx.chunks, new([1 << tableShift]V))
		tx.owned[len(tx.chunks)-1] = true
	}
	if !tx.owned[c] {
		cp := *tx.chunks[c]
		tx.chunks[c] = &cp
		tx.owned[c] = true
	}
	tx.chunks[c][id&(1<<tableShift-1)] = v
}

func (tx *numberedTx[V]) commit() numbered[V] { return numbered[V]{chunks: slices.Clip(tx.chunks)} }

// svcTable is a snapshot's services by number. free is the numbers of
// deleted services, for reuse (never modified once published); every
// number below n is either a service's or free.
type svcTable struct {
	byID numbered[*service]
	free []svcID
	n    svcID
}

// at is the service numbered id, nil when none is.
func (t *svcTable) at(id svcID) *service { return t.byID.at(id) }

// len is one past the largest number handed out: a slice of that length
// has a place for every service.
func (t *svcTable) len() int { return int(t.n) }

// svcTableTx is one batch's edit of a svcTable.
type svcTableTx struct {
	byID      *numberedTx[*service]
	free      []svcID
	n         svcID
	freeOwned bool
	released  []svcID // freed by this batch, not yet reusable (recycle)
}

func (t *svcTable) edit() *svcTableTx {
	return &svcTableTx{byID: t.byID.edit(), free: t.free, n: t.n}
}

func (tx *svcTableTx) put(id svcID, s *service) { tx.byID.put(id, s) }

// release frees a deleted service's number; recycle makes it reusable.
func (tx *svcTableTx) release(id svcID) {
	tx.put(id, nil)
	tx.released = append(tx.released, id)
}

// recycle makes the numbers released so far reusable, the smallest taken
// first, whatever order they were released in.
func (tx *svcTableTx) recycle() {
	if len(tx.released) == 0 {
		return
	}
	if !tx.freeOwned {
		tx.free, tx.freeOwned = slices.Clone(tx.free), true
	}
	slices.Sort(tx.released)
	slices.Reverse(tx.released)
	tx.free = append(tx.free, tx.released...)
	tx.released = tx.released[:0]
}

// take hands out a number for a new service: the last one freed, else
// the next never used.
func (tx *svcTableTx) take() svcID {
	if n := len(tx.free); n > 0 {
		if !tx.freeOwned {
			tx.free, tx.freeOwned = slices.Clone(tx.free), true
		}
		id := tx.free[n-1]
		tx.free = tx.free[:n-1]
		return id
	}
	tx.n++
	return tx.n - 1
}

func (tx *svcTableTx) commit() svcTable {
	return svcTable{byID: tx.byID.commit(), free: slices.Clip(tx.free), n: tx.n}
}

// places is one walk's mark of the services it reached, by number: the
// place among the consumers (-1 for the changed service) of each one
// reached. The values are stored as place+2, so the zero slice marks
// nothing.
type places []int32

func (p places) get(id svcID) (int32, bool) {
	v := p[id]
	return v - 2, v != 0
}

func (p places) set(id svcID, place int32) { p[id] = place + 2 }
