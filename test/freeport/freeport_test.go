package freeport_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/kubepact/kubepact/test/freeport"
)

// TestPortNeverRepeats asks many times in a row, closing nothing in
// between itself, and checks that every port is distinct and can be
// listened on.
func TestPortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := freeport.Port(t)
		if seen[p] {
			t.Fatalf("port %d returned twice", p)
		}
		seen[p] = true
	}
	p := freeport.Port(t)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("port %d is not free: %v", p, err)
	}
	_ = ln.Close()
}

// TestClosedAddrRefuses dials the address ClosedAddr gives: nothing
// answers there.
func TestClosedAddrRefuses(t *testing.T) {
	addr := freeport.ClosedAddr(t)
	c, err := net.Dial("tcp", addr)
	if err == nil {
		_ = c.Close()
		t.Fatalf("%s accepted a connection; want it refused", addr)
	}
}
