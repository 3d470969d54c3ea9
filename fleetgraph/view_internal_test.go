package fleetgraph

import (
	"testing"
	"time"
)

// TestViewsAreCarried: a view read on the current snapshot is ready on
// the next one before any reader asks, and one never read is not built.
func TestViewsAreCarried(t *testing.T) {
	b := NewBuilder(nil)
	for i, sc := range []string{"a", "b"} {
		if err := b.UpsertTarget(&Target{Scope: sc, Kind: "Deployment", Name: sc, Service: "svc", Source: "kube"}); err != nil {
			t.Fatal(i, err)
		}
	}
	first := b.Flush()
	read := OnlyScopes("a")
	first.Restrict(read)
	if err := b.UpsertTarget(&Target{Scope: "a", Kind: "Deployment", Name: "a2", Service: "svc", Source: "kube", EvidenceAt: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	next := b.Flush()
	next.views.mu.Lock()
	e, carried := next.views.m[read.key]
	others := len(next.views.m)
	next.views.mu.Unlock()
	if !carried || e.ready.Load() == nil || others != 1 {
		t.Fatalf("views on the next snapshot: carried=%v, %d in all; want the one read, built", carried, others)
	}
	if got := next.Restrict(read); got != e.ready.Load() {
		t.Error("Restrict rebuilt a carried view")
	}
	if _, _, tg := next.Restrict(read).Counts(); tg != 2 {
		t.Errorf("the carried view holds %d targets, want 2", tg)
	}
}
