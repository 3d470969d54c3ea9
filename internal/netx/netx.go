// Package netx holds network predicates shared by the transports and the
// generated tools: today, whether a host stays on the loopback interface
// (the rule behind the MCP listener's Host check, the sidecar's
// --upstream and the generated tools' read-only hints).
//
// It owns predicates over names and addresses only: it never dials,
// resolves or listens, and imports nothing but the standard library.
package netx

import (
	"net"
	"strings"
)

// IsLoopbackHost reports whether a request to host (no port) stays on the
// loopback interface: a 127.0.0.0/8 or ::1 address, or the name localhost,
// which the resolver answers from /etc/hosts. Any other name — a
// subdomain of localhost, or "localhost." — is looked up in DNS (with
// the pod's search domains) and may lead anywhere.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
