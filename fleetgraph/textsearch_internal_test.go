package fleetgraph

import (
	"fmt"
	"testing"
)

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
