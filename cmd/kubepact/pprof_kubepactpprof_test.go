//go:build kubepactpprof

package main

import (
	"strings"
	"testing"
)

// TestPprofAddrLoopbackOnly: the check the profiling build's init runs
// before it serves pprof accepts a loopback host:port only; a hostile or
// careless KUBEPACT_PPROF_ADDR (every interface, a public host, no port)
// is refused in words that name loopback. Run with: go test -tags kubepactpprof -run TestPprofAddr ./cmd/kubepact
func TestPprofAddrLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:6060"} {
		if err := pprofAddr(addr); err != nil {
			t.Errorf("pprofAddr(%q): %v, want accepted", addr, err)
		}
	}
	for _, addr := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "10.0.0.1:6060", "example.com:6060", "127.0.0.1", ""} {
		err := pprofAddr(addr)
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("pprofAddr(%q) = %v, want a refusal naming loopback", addr, err)
		}
	}
}
