package mcp

import (
	"net/http"
	"testing"
)

// TestLoopbackRuleIsStrict: the HTTP guard and the capability projection
// share one loopback rule. A subdomain of localhost is looked up in DNS
// (search domains included) and may lead anywhere, so a Host header naming
// one is a rebinding attempt, as it is for any other name.
func TestLoopbackRuleIsStrict(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, &Options{Transport: TransportHTTP}))
	for host, want := range map[string]int{
		"localhost:1234":      http.StatusOK,
		"127.0.0.1":           http.StatusOK,
		"[::1]:8585":          http.StatusOK,
		"evil.localhost":      http.StatusForbidden,
		"evil.localhost:8585": http.StatusForbidden,
	} {
		resp := rawRequest(t, url, map[string]string{"Host": host})
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}
