package fleetgraph

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTextSearchAcrossChunks checks the text search's reading of the
// order's chunk blobs against a scan of the records, on a fleet large
// enough to span many chunks, through batches that copy chunks (upserts
// that change owners, deletes, new services) and so rebuild their blobs.
// Queries match names, owners, the bytes at the end of one text and the
// start of the next, and the separator inside a text.
func TestTextSearchAcrossChunks(t *testing.T) {
	clock := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	b := NewBuilder(&BuilderOptions{Clock: func() time.Time { return clock }})
	rng := rand.New(rand.NewPCG(3, 5))
	owners := []string{"", "Team-A", "ops", "Payments-Core", "x"}
	live := map[string]*Revision{}
	upsert := func(i int) {
		r := &Revision{
			Name: fmt.Sprintf("svc-%04d", i), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%04d", i),
			Owner: owners[rng.IntN(len(owners))], Source: "s1",
		}
		live[r.Name] = r
		if err := b.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1500 {
		upsert(i)
	}
	queries := []string{
		"svc-", "svc-0", "svc-0127", "svc-0128", "svc-1499", "svc-0000", "0\x00", "9\x00team", "\x00ops",
		"team-a", "ops", "core", "s-c", "x", "4", "00", "99", "nothing-here", "svc-04\x00", "\x00svc-00", "ops\x00svc", "\x00\x00",
	}
	prev := 0
	for round := range 6 {
		s := b.Flush()
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if n := s.order.len(); round > 0 && n == prev {
			t.Fatalf("round %d: the batch changed no service count (%d); the deletes did not happen", round, n)
		}
		prev = s.order.len()
		if s.order.len() <= 4*chunkSize {
			t.Fatalf("round %d: %d services fill too few chunks for this test", round, s.order.len())
		}
		for _, text := range queries {
			for _, q := range []SearchQuery{{Text: text}, {Text: text, Owner: "ops"}} {
				q.Limit = MaxSearchLimit
				want, err := s.searchScan(q)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for cur := ""; ; {
					pq := q
					pq.Cursor = cur
					res, err := s.Search(pq)
					if err != nil {
						t.Fatalf("round %d %q: %v", round, text, err)
					}
					if res.Total != len(want) {
						t.Fatalf("round %d %+v: total %d, want %d", round, q, res.Total, len(want))
					}
					for _, sv := range res.Services {
						got = append(got, sv.Key)
					}
					if !res.Truncated {
						break
					}
					cur = res.NextCursor
				}
				if diff := cmp.Diff(got, want); diff != "" {
					t.Fatalf("round %d %+v: keys (-got +want):\n%s", round, q, diff)
				}
			}
		}
		// The next batch: new owners for some, some gone, some new.
		for range 200 {
			upsert(rng.IntN(1700))
		}
		for range 60 {
			k := fmt.Sprintf("svc-%04d", rng.IntN(1700))
			if r, ok := live[k]; ok {
				delete(live, k)
				b.DeleteRevision(r.Key())
			}
		}
		clock = clock.Add(time.Hour)
	}
}

// TestTextSearchConcurrentFirstReads: searches racing on a snapshot no
// search has read yet build its chunks' blobs together (run with -race)
// and answer the same.
func TestTextSearchConcurrentFirstReads(t *testing.T) {
	b := NewBuilder(nil)
	for i := range 1000 {
		if err := b.UpsertRevision(&Revision{Name: fmt.Sprintf("svc-%04d", i), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%04d", i), Owner: "ops", Source: "s1"}); err != nil {
			t.Fatal(err)
		}
	}
	s := b.Flush()
	want, err := s.searchScan(SearchQuery{Text: "9", Limit: MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	totals := make(chan int, 8)
	for range 8 {
		go func() {
			res, err := s.Search(SearchQuery{Text: "9", Limit: MaxSearchLimit})
			if err != nil {
				totals <- -1
				return
			}
			totals <- res.Total
		}()
	}
	for range 8 {
		if got := <-totals; got != len(want) {
			t.Fatalf("total %d, want %d", got, len(want))
		}
	}
}
