package netx

import "testing"

// TestIsLoopbackHost pins which hosts count as loopback: addresses in
// 127.0.0.0/8 and ::1 and the exact name localhost (any case); never a
// name the resolver would send to DNS, nor an address with a port.
func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1":          true,
		"127.10.20.30":       true,
		"::1":                true,
		"localhost":          true,
		"LocalHost":          true,
		"0:0:0:0:0:0:0:1":    true,
		"localhost.":         false,
		"api.localhost":      false,
		"127.0.0.1.nip.io":   false,
		"10.0.0.1":           false,
		"::":                 false,
		"0.0.0.0":            false,
		"":                   false,
		"127.0.0.1:8080":     false,
		"[::1]":              false,
		"::ffff:127.0.0.1":   true,
		"example.com":        false,
		"localhost.example.": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
