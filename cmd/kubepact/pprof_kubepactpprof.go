//go:build kubepactpprof

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"

	"github.com/kubepact/kubepact/internal/netx"
)

// A profiling build (go build -tags kubepactpprof, never a release
// build): with KUBEPACT_PPROF_ADDR=127.0.0.1:PORT the process serves
// net/http/pprof there, so a sidecar measured as a process (as
// TestSidecarVsFloor runs it) can be profiled while it serves:
//
//	go tool pprof -top http://127.0.0.1:PORT/debug/pprof/profile?seconds=20
//
// Only a loopback address is accepted.
func init() {
	addr := os.Getenv("KUBEPACT_PPROF_ADDR")
	if addr == "" {
		return
	}
	if err := pprofAddr(addr); err != nil {
		fmt.Fprintf(os.Stderr, "kubepact: %v; not serving pprof\n", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() { _ = http.ListenAndServe(addr, mux) }() //nolint:gosec // a profiling build on loopback only
}

// pprofAddr refuses an address that is not a loopback host:port.
func pprofAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !netx.IsLoopbackHost(host) {
		return fmt.Errorf("KUBEPACT_PPROF_ADDR %q is not a loopback host:port", addr)
	}
	return nil
}
