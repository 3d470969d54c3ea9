package tokenbucket_test

import (
	"testing"
	"time"

	"github.com/kubepact/kubepact/internal/tokenbucket"
)

// TestBucket: a full bucket admits its burst at once, then one event per
// 1/rate seconds as the clock moves, never more than the burst after a
// long pause.
func TestBucket(t *testing.T) {
	now := time.Unix(1000, 0)
	b := tokenbucket.New(2, 3, func() time.Time { return now })
	admitted := func() (n int) {
		for b.Allow() {
			n++
		}
		return n
	}
	if n := admitted(); n != 3 {
		t.Fatalf("full bucket admitted %d, want the burst 3", n)
	}
	now = now.Add(500 * time.Millisecond)
	if n := admitted(); n != 1 {
		t.Errorf("after 0.5s at 2/s: %d admitted, want 1", n)
	}
	now = now.Add(time.Hour)
	if n := admitted(); n != 3 {
		t.Errorf("after an hour: %d admitted, want the burst 3", n)
	}
	now = now.Add(-time.Minute) // a clock stepping back adds nothing
	if b.Allow() {
		t.Error("a clock stepping back admitted an event")
	}
}
