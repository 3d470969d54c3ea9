package oci

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAddrClass: the address rule's table of non-public addresses,
// including the IPv6 forms that carry an IPv4 address.
func TestAddrClass(t *testing.T) {
	for addr, want := range map[string]string{
		"8.8.8.8":                  "",
		"140.82.112.33":            "",
		"172.32.0.1":               "",
		"100.128.0.1":              "",
		"169.253.255.255":          "",
		"::ffff:8.8.8.8":           "",
		"64:ff9b::808:808":         "", // NAT64 of 8.8.8.8
		"2002:808:808::1":          "", // 6to4 of 8.8.8.8
		"2606:4700::6810:85e5":     "",
		"2a00:1450:4001:82b::200e": "",
		"127.0.0.1":                "loopback",
		"127.0.0.2":                "loopback",
		"127.255.255.255":          "loopback",
		"::1":                      "loopback",
		"::ffff:127.0.0.1":         "loopback",
		"64:ff9b::7f00:1":          "loopback",
		"2002:7f00:1::":            "loopback",
		"169.254.169.254":          "cloud metadata",
		"::ffff:169.254.169.254":   "cloud metadata",
		"64:ff9b::a9fe:a9fe":       "cloud metadata",
		"2002:a9fe:a9fe::1":        "cloud metadata",
		"fd00:ec2::254":            "cloud metadata",
		"168.63.129.16":            "cloud metadata",
		"100.100.100.200":          "cloud metadata",
		"169.254.10.1":             "link-local",
		"fe80::1":                  "link-local",
		"fe80::1%eth0":             "link-local",
		"10.1.2.3":                 "private",
		"172.31.0.1":               "private",
		"192.168.1.1":              "private",
		"::ffff:10.0.0.1":          "private",
		"fd12:3456::1":             "private",
		"100.64.0.1":               "shared (carrier-grade NAT)",
		"0.0.0.0":                  "unspecified",
		"::":                       "unspecified",
		"224.0.0.1":                "multicast",
		"ff02::1":                  "multicast",
		"255.255.255.255":          "reserved",
		"::127.0.0.1":              "reserved", // IPv4-compatible
		"64:ff9b:1::1":             "reserved",
		"2001:db8::1":              "reserved",
		"2001:0:4136:e378::1":      "reserved", // Teredo
		"198.18.0.1":               "reserved",
		"203.0.113.9":              "reserved",
	} {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if got := addrClass(a); got != want {
			t.Errorf("addrClass(%s) = %q, want %q", addr, got, want)
		}
	}
}

// TestPolicyEntries: what the allow-list admits, and which hosts it names
// itself (so that they may be at a non-public address).
func TestPolicyEntries(t *testing.T) {
	p, err := newPolicy([]string{"ghcr.io", "127.0.0.1:5000", "[::1]:5001", "Registry.Example.com:8443"}, []string{"10.0.0.9:3128"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		registry string
		admits   bool
	}{
		{"ghcr.io", true}, {"ghcr.io:4443", true}, {"GHCR.IO", true},
		{"127.0.0.1:5000", true}, {"127.0.0.1:5001", false}, {"127.0.0.1", false},
		{"[::1]:5001", true}, {"[0:0::1]:5001", true}, {"[::1]:5000", false},
		{"registry.example.com:8443", true}, {"registry.example.com", false},
		{"docker.io", false}, {"ghcr.io.evil.example", false},
	} {
		if got := p.admits(tc.registry, "443"); got != tc.admits {
			t.Errorf("admits(%s) = %v, want %v", tc.registry, got, tc.admits)
		}
	}
	if !p.named("10.0.0.9", "3128") {
		t.Error("the environment's proxy is not dialled as a named host")
	}
	if diff := cmp.Diff([]string{"127.0.0.1:5000", "Registry.Example.com:8443", "[::1]:5001", "ghcr.io"}, p.entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}

	anyp, err := newPolicy(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !anyp.admits("anything.example:1", "443") || anyp.named("anything.example", "1") {
		t.Error(`nil entries: want "*" (every registry admitted, none named)`)
	}
	none, err := newPolicy([]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if none.admits("ghcr.io", "443") {
		t.Error("an empty allow-list admitted a registry")
	}
	for _, bad := range []string{"oci://ghcr.io", "ghcr.io/acme", "", "*.example.com", "host:99999", "host:0", "http://x"} {
		_, err := newPolicy([]string{bad}, nil)
		if _, ok := errors.AsType[*entryError](err); !ok {
			t.Errorf("entry %q: error %v, want an entryError", bad, err)
		}
	}
}

// TestCheckRedirect: a redirect may not leave HTTPS for plain HTTP, nor
// chain without end; where it may go is the dial guard's decision.
func TestCheckRedirect(t *testing.T) {
	req := func(u string) *http.Request {
		r, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	secure := req("https://ghcr.io/v2/acme/orders/blobs/sha256:1")
	if err := checkRedirect(req("https://pkg-containers.example/blob"), []*http.Request{secure}); err != nil {
		t.Errorf("HTTPS to HTTPS on another host: %v, want followed", err)
	}
	if _, ok := errors.AsType[*redirectError](checkRedirect(req("http://ghcr.io/blob"), []*http.Request{secure})); !ok {
		t.Error("HTTPS to plain HTTP: followed, want refused")
	}
	if err := checkRedirect(req("http://127.0.0.1:5000/blob"), []*http.Request{req("http://127.0.0.1:5000/v2/")}); err != nil {
		t.Errorf("plain HTTP to plain HTTP: %v, want followed", err)
	}
	chain := make([]*http.Request, maxRedirects)
	for i := range chain {
		chain[i] = secure
	}
	if _, ok := errors.AsType[*redirectError](checkRedirect(secure, chain)); !ok {
		t.Errorf("redirect number %d: followed, want refused", maxRedirects+1)
	}
}

// TestOptionsAllowList: the registries a command was given are allowed on
// their own port (the default port when they name none), besides
// AllowedRegistries; local references add nothing.
func TestOptionsAllowList(t *testing.T) {
	o := &Options{AllowedRegistries: []string{"ghcr.io"}, PlainHTTP: true}
	o.Allow("oci://127.0.0.1:5000/acme/orders:1.0.0", "oci://registry.example.com/acme/x@sha256:"+strings.Repeat("a", 64), "./local/bundle", "file:///tmp/b", "oci://bad ref")
	want := []string{"ghcr.io", "127.0.0.1:5000", "registry.example.com:443", "registry.example.com:80"}
	if diff := cmp.Diff(want, o.allowList()); diff != "" {
		t.Errorf("allow-list (-want +got):\n%s", diff)
	}
	if got := (&Options{}).allowList(); got == nil || len(got) != 0 {
		t.Errorf("nothing named, nothing listed: %#v, want an empty, non-nil list (nothing allowed)", got)
	}
	_, err := (&Options{AllowedRegistries: []string{"https://ghcr.io"}}).Client()
	if err == nil || !strings.HasPrefix(err.Error(), "AllowedRegistries: ") || FlagNames["AllowedRegistries"] != "--allowed-registries" {
		t.Errorf("a bad entry: %v, want an error naming the field that --allowed-registries binds", err)
	}
}

// TestEnvironmentProxies: the proxies the environment names are dialled
// as named hosts (the process's owner chose them), on their own or the
// scheme's port.
func TestEnvironmentProxies(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "10.0.0.9:3128")
	t.Setenv("HTTP_PROXY", "https://Proxy.Corp.example")
	t.Setenv("NO_PROXY", "")
	_, got := environmentProxies()
	if diff := cmp.Diff([]string{"10.0.0.9:3128", "proxy.corp.example:443"}, got); diff != "" {
		t.Errorf("proxies (-want +got):\n%s", diff)
	}
	p, err := newPolicy([]string{AnyRegistry}, got)
	if err != nil {
		t.Fatal(err)
	}
	if !p.named("10.0.0.9", "3128") || p.named("10.0.0.9", "80") {
		t.Error("the proxy's own port is not the one named")
	}
}

// BenchmarkAddressRule is the dial guard's check of one resolved address
// (what a connection to a host not named costs before connect), and the
// allow-list's check of one reference.
func BenchmarkAddressRule(b *testing.B) {
	p, err := newPolicy([]string{"ghcr.io", "127.0.0.1:5000", "registry.example.com:8443"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, addr := range []string{"140.82.112.33:443", "[2606:4700::6810:85e5]:443", "169.254.169.254:80"} {
		b.Run("addr="+addr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ap, err := netip.ParseAddrPort(addr)
				if err != nil {
					b.Fatal(err)
				}
				_ = addrClass(ap.Addr())
			}
		})
	}
	b.Run("admits", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !p.admits("registry.example.com:8443", "443") {
				b.Fatal("refused")
			}
		}
	})
}

// TestClientsOfOnePolicyShareATransport: a client per pull Secret reuses
// the connections of the others of its policy; another policy gets its
// own transport, whose guard is its own.
func TestClientsOfOnePolicyShareATransport(t *testing.T) {
	o := &Options{AllowedRegistries: []string{"ghcr.io"}}
	transportOf := func(o *Options, secret []byte) http.RoundTripper {
		c, err := o.ClientWithCredentials(secret)
		if err != nil {
			t.Fatal(err)
		}
		return c.client.Client.Transport
	}
	a, b := transportOf(o, nil), transportOf(o, []byte(`{"auths":{"ghcr.io":{"auth":"dTpw"}}}`))
	if a != b {
		t.Error("two clients of one policy have two transports")
	}
	if other := transportOf(&Options{AllowedRegistries: []string{"quay.io"}}, nil); other == a {
		t.Error("clients of two policies share a transport")
	}
}
