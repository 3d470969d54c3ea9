package fleetgraph

import "slices"

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

// tableShift sizes a svcTable chunk: 256 records, 2 KiB of pointers.
const tableShift = 8

// svcTable is a snapshot's services by number: an immutable array in
// chunks, shared with the next snapshot but for the chunks a batch
// changed (copy on write), the way pmap shares its shards. free is the
// numbers of deleted services, for reuse (never modified once
// published); every number below n is either a service's or free.
type svcTable struct {
	chunks []*[1 << tableShift]*service
	free   []svcID
	n      svcID
}

// at is the service numbered id, nil when none is.
func (t *svcTable) at(id svcID) *service {
	c := int(id) >> tableShift
	if id < 0 || c >= len(t.chunks) {
		return nil
	}
	return t.chunks[c][id&(1<<tableShift-1)]
}

// len is one past the largest number handed out: a slice of that length
// has a place for every service.
func (t *svcTable) len() int { return int(t.n) }

// svcTableTx is one batch's edit of a svcTable.
type svcTableTx struct {
	svcTable
	owned     map[int]bool // chunks this batch copied
	freeOwned bool
	released  []svcID // freed by this batch, not yet reusable (recycle)
}

func (t *svcTable) edit() *svcTableTx {
	return &svcTableTx{svcTable: svcTable{chunks: slices.Clone(t.chunks), free: t.free, n: t.n}, owned: map[int]bool{}}
}

func (tx *svcTableTx) put(id svcID, s *service) {
	c := int(id) >> tableShift
	for c >= len(tx.chunks) {
		tx.chunks = append(tx.chunks, new([1 << tableShift]*service))
		tx.owned[len(tx.chunks)-1] = true
	}
	if !tx.owned[c] {
		cp := *tx.chunks[c]
		tx.chunks[c] = &cp
		tx.owned[c] = true
	}
	tx.chunks[c][id&(1<<tableShift-1)] = s
}

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
	return svcTable{chunks: slices.Clip(tx.chunks), free: slices.Clip(tx.free), n: tx.n}
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
