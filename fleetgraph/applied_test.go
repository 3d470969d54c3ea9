package fleetgraph_test

import (
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
)

// TestApplied: the channel Applied returns is closed by the next Flush
// that applies a batch, also when the batch changes nothing, and not by a
// Flush with nothing queued.
func TestApplied(t *testing.T) {
	b := fleetgraph.NewBuilder(nil)
	at0, ch := b.Applied()
	if !at0.IsZero() {
		t.Fatalf("Applied before any batch = %v, want zero", at0)
	}
	b.Flush()
	select {
	case <-ch:
		t.Fatal("a Flush with nothing queued closed the channel")
	default:
	}
	tgt := fleetgraph.Target{Scope: "s", Kind: "k", Name: "a", Service: "svc", Source: "x"}
	for round := range 2 { // the second upsert changes nothing
		if err := b.UpsertTarget(&tgt); err != nil {
			t.Fatal(err)
		}
		snap := b.Flush()
		select {
		case <-ch:
		default:
			t.Fatalf("round %d: Flush applied a batch and did not close the channel", round)
		}
		at := snap.AsOf()
		at0, ch = b.Applied()
		if at0.Before(at) {
			t.Fatalf("round %d: Applied at %v, before the snapshot's asOf %v", round, at0, at)
		}
	}
}
