// Package freeport hands tests loopback TCP ports to give the servers they
// start. The kernel may hand a port just closed out again at once, so two
// asks in a row (a server's --port and --health-addr) could name the same
// port and the server fail to start; Port never returns a port twice in one
// test process.
//
// It imports nothing from kubepact.
package freeport

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

var handed = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// Port is a loopback port free at the time of asking that Port has not
// returned before in this process.
func Port(t testing.TB) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		handed.Lock()
		seen := handed.m[port]
		handed.m[port] = true
		handed.Unlock()
		if !seen {
			return port
		}
	}
	t.Fatal("no loopback port that this test process has not already used, in 100 tries")
	return 0
}

// ClosedAddr is a loopback address ("127.0.0.1:port") that nothing listens
// on: a port from Port, so no other server this process starts is handed
// it, for tests of what a client does when it is refused.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(Port(t)))
}
