package fleetgraph

import (
	"testing"
	"unsafe"
)

// TestInRefSize: the inbound index holds one inRef per resolved edge (some
// 50,000 at 10,000 services); the service number and the edge's kind fit
// in what was padding, and stay there.
func TestInRefSize(t *testing.T) {
	if got := unsafe.Sizeof(inRef{}); got != 48 {
		t.Errorf("an inRef is %d bytes, want 48", got)
	}
}

// TestEdgePlace: an edge's place and kind come back out of their word.
func TestEdgePlace(t *testing.T) {
	for _, i := range []int{0, 1, 2, 1000, 1<<31 - 1} {
		for _, dep := range []bool{false, true} {
			p := newEdgePlace(i, dep)
			if int(p.index()) != i || p.dep() != dep {
				t.Errorf("newEdgePlace(%d, %v) = %d, which reads back as (%d, %v)", i, dep, p, p.index(), p.dep())
			}
		}
	}
}
