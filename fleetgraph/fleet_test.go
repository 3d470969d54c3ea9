package fleetgraph_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
)

func TestCursorAcrossSnapshotChange(t *testing.T) {
	b, s := testFleet(t)
	page1, err := s.Search(fleetgraph.SearchQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !page1.Truncated || page1.NextCursor == "" || page1.Total != 6 || page1.Count != 2 {
		t.Fatalf("page 1: truncated=%v cursor=%q total=%d count=%d", page1.Truncated, page1.NextCursor, page1.Total, page1.Count)
	}
	var keys []string
	for cur := page1.NextCursor; cur != ""; {
		p, err := s.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, sv := range p.Services {
			keys = append(keys, sv.Key)
		}
		cur = p.NextCursor
	}
	if diff := cmp.Diff(keys, []string{"ledger", "orders", "payments", "search"}); diff != "" {
		t.Errorf("pages 2.. (-got +want):\n%s", diff)
	}
	// The cursor with other filters is refused.
	_, err = s.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: page1.NextCursor, Text: "a"})
	var qe *fleetgraph.QueryError
	if !errors.As(err, &qe) || qe.Code != fleetgraph.CodeCursorInvalid {
		t.Errorf("cursor with other filters: %v, want %s", err, fleetgraph.CodeCursorInvalid)
	}
	// A new snapshot: the old cursor is a clear error naming both.
	if err := b.UpsertTarget(&fleetgraph.Target{Scope: "dev", Kind: "k", Name: "x", Service: "newcomer", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	s2 := b.Flush()
	if s2.ID() == s.ID() {
		t.Fatal("the snapshot id did not change")
	}
	_, err = s2.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: page1.NextCursor})
	if !errors.As(err, &qe) || qe.Code != fleetgraph.CodeSnapshotMismatch || !strings.Contains(qe.Message, s.ID()) || !strings.Contains(qe.Message, s2.ID()) {
		t.Errorf("old cursor on a new snapshot: %v", err)
	}
	if got, ok := b.Lookup(s.ID()); !ok || got != s {
		t.Errorf("Lookup(previous) = %v, %v; want the retained snapshot", got, ok)
	}
	if _, err := s.Search(fleetgraph.SearchQuery{Cursor: "garbage!"}); !errors.As(err, &qe) || qe.Code != fleetgraph.CodeCursorInvalid {
		t.Errorf("garbage cursor: %v", err)
	}
}

func TestSnapshotIDIsDeterministic(t *testing.T) {
	_, a := testFleet(t)
	_, b := testFleet(t)
	if a.ID() != b.ID() {
		t.Errorf("two builds of the same fleet: %s and %s", a.ID(), b.ID())
	}
}

func TestInvalidQueries(t *testing.T) {
	_, s := testFleet(t)
	for name, run := range map[string]func() error{
		"limit":      func() error { _, err := s.Search(fleetgraph.SearchQuery{Limit: 501}); return err },
		"status":     func() error { _, err := s.Search(fleetgraph.SearchQuery{Status: "Bad"}); return err },
		"labels":     func() error { _, err := s.Search(fleetgraph.SearchQuery{Labels: "=x"}); return err },
		"both":       func() error { _, err := s.Get(fleetgraph.GetQuery{Service: "a", Target: "b"}); return err },
		"neither":    func() error { _, err := s.Get(fleetgraph.GetQuery{}); return err },
		"direction":  func() error { _, err := s.Graph(fleetgraph.GraphQuery{Service: "orders", Direction: "up"}); return err },
		"depth":      func() error { _, err := s.Graph(fleetgraph.GraphQuery{Service: "orders", MaxDepth: -1}); return err },
		"no-subject": func() error { _, err := s.Explain(fleetgraph.ExplainQuery{}); return err },
	} {
		var qe *fleetgraph.QueryError
		if err := run(); !errors.As(err, &qe) || qe.Code != fleetgraph.CodeInvalidQuery {
			t.Errorf("%s: %v, want %s", name, err, fleetgraph.CodeInvalidQuery)
		}
	}
}

// TestConcurrentReadersNeverSeeHalfSnapshots publishes thousands of
// updates while readers query and check every snapshot's invariants.
func TestConcurrentReadersNeverSeeHalfSnapshots(t *testing.T) {
	b, _ := testFleet(t)
	const writes = 2000
	var done atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	for range 3 {
		wg.Go(func() {
			for !done.Load() {
				s := b.Current()
				if err := s.CheckInvariants(); err != nil {
					t.Error(err)
					return
				}
				res, err := s.Search(fleetgraph.SearchQuery{Limit: 5})
				if err != nil || res.Meta.SnapshotID != s.ID() {
					t.Errorf("search: %v", err)
					return
				}
				if _, err := s.Graph(fleetgraph.GraphQuery{Service: "orders", Transitive: true}); err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
			}
		})
	}
	for i := range writes {
		svc := fmt.Sprintf("svc-%d", i%50)
		rev := &fleetgraph.Revision{Name: svc, Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064d", i%120), Source: "w",
			Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: fmt.Sprintf("svc-%d", (i+1)%50), Ref: "x"}}}
		if err := b.UpsertRevision(rev); err != nil {
			t.Fatal(err)
		}
		// A re-upsert moves the target between services, labels and
		// compliances, so every index must follow a changed record.
		tgt := &fleetgraph.Target{Scope: fmt.Sprintf("s%d", i%3), Kind: "k", Name: fmt.Sprintf("t-%d", i%300), Service: fmt.Sprintf("svc-%d", i%47), Source: "w",
			Compliance: fleetgraph.Statuses()[i%len(fleetgraph.Statuses())], Labels: map[string]string{"env": fmt.Sprint(i % 7)}}
		if err := b.UpsertTarget(tgt); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			b.DeleteRevision(rev.Key())
		}
		if i%11 == 0 {
			b.DeleteTarget(fleetgraph.TargetKey("s0", "k", fmt.Sprintf("t-%d", (i+150)%300)))
		}
		if i%3 == 0 {
			b.Flush()
		}
	}
	b.Flush()
	done.Store(true)
	wg.Wait()
	if err := b.Current().CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads checked", reads.Load())
}

func TestRunCoalesces(t *testing.T) {
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Debounce: 20 * time.Millisecond})
	start := b.Current().Seq()
	done := make(chan struct{})
	go func() { _ = b.Run(t.Context()); close(done) }()
	for i := range 100 {
		if err := b.UpsertTarget(&fleetgraph.Target{Scope: "s", Kind: "k", Name: fmt.Sprint(i), Service: "a", Source: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Current().Seq() == start && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if _, _, n := b.Current().Counts(); n != 100 {
		t.Errorf("%d targets published, want 100", n)
	}
	if seq := b.Current().Seq() - start; seq > 3 {
		t.Errorf("%d publications for one burst, want it coalesced", seq)
	}
}
