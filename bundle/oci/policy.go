package oci

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/kubepact/kubepact/internal/tracing"
)

// AnyRegistry is the allow-list entry that admits every registry, as long
// as each connection goes to a public address.
const AnyRegistry = "*"

// DefaultTimeout bounds one registry operation (resolving a tag, pulling or
// pushing a bundle) when no timeout is given.
const DefaultTimeout = 30 * time.Second

// Connection bounds below the operation's timeout.
const (
	dialTimeout         = 10 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	maxRedirects        = 10
)

// policy is the one registry policy of a Client. It has two parts:
//
//   - the allow-list: which registries a reference may name at all. It is
//     checked before anything is resolved or dialled, so a refused
//     registry costs no packet and answers the same whether it exists or
//     not. An entry is host[:port] (without a port: any port of that
//     host) or AnyRegistry.
//   - the address rule: every connection the client opens — to the
//     registry, to a host it redirects to, to its token service — goes to
//     a public address, checked on the resolved IP at dial time, so a DNS
//     name that resolves to 127.0.0.1 or a redirect to 169.254.169.254 is
//     refused. Only a host the allow-list names itself (not through
//     AnyRegistry) may be at a loopback, link-local, private, metadata or
//     otherwise non-public address: naming it is the explicit consent.
//
// The proxies of the environment (HTTPS_PROXY, HTTP_PROXY) are dialled as
// named hosts: the process's owner chose them.
type policy struct {
	any bool
	// hosts admit every port of a host; hostPorts one port.
	hosts     map[string]bool
	hostPorts map[string]bool
	// entries are the allow-list as given, for messages.
	entries []string
	proxies map[string]bool
}

// entryError is an allow-list entry that is not host[:port] or "*".
type entryError struct{ entry string }

func (e *entryError) Error() string {
	return fmt.Sprintf("AllowedRegistries: %q is not a registry: want host[:port] such as ghcr.io or 127.0.0.1:5000, or %s for any registry at a public address", e.entry, AnyRegistry)
}

// newPolicy builds the policy of entries. A nil entries means
// AnyRegistry; an empty, non-nil one admits nothing.
func newPolicy(entries []string, proxies []string) (*policy, error) {
	if entries == nil {
		entries = []string{AnyRegistry}
	}
	p := &policy{hosts: map[string]bool{}, hostPorts: map[string]bool{}, proxies: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == AnyRegistry {
			p.any = true
			p.entries = append(p.entries, e)
			continue
		}
		host, port, ok := splitRegistry(e)
		if !ok {
			return nil, &entryError{entry: e}
		}
		if port == "" {
			p.hosts[host] = true
		} else {
			p.hostPorts[net.JoinHostPort(host, port)] = true
		}
		p.entries = append(p.entries, e)
	}
	slices.Sort(p.entries)
	p.entries = slices.Compact(p.entries)
	for _, pr := range proxies {
		p.proxies[pr] = true
	}
	return p, nil
}

// splitRegistry splits a registry as references write it (host, host:port,
// [v6]:port) into a canonical host and its port, if it has one.
func splitRegistry(s string) (host, port string, ok bool) {
	if !hostRE.MatchString(s) {
		return "", "", false
	}
	host = s
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.HasSuffix(s, "]") {
		host, port = s[:i], s[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", "", false
		}
	}
	return canonicalHost(host), port, true
}

// canonicalHost lowercases a host and writes an IP address one way, so that
// [::1], ::1 and 0:0::1 name one host.
func canonicalHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return h
}

// admits reports whether a reference may name registry (host[:port]); a
// registry without a port is reached on defaultPort.
func (p *policy) admits(registry, defaultPort string) bool {
	if p.any {
		return true
	}
	host, port, ok := splitRegistry(registry)
	if !ok {
		return false
	}
	if port == "" {
		port = defaultPort
	}
	return p.named(host, port)
}

// named reports whether the allow-list names host:port itself (not through
// AnyRegistry), so that it may be at a non-public address.
func (p *policy) named(host, port string) bool {
	host = canonicalHost(host)
	hp := net.JoinHostPort(host, port)
	return p.hosts[host] || p.hostPorts[hp] || p.proxies[hp]
}

// AddressError is a connection the address rule refused before it was
// made: Host is not named in the allow-list and is at a non-public
// address. Nothing was sent to it.
type AddressError struct {
	// Host and Port are what the connection was for (a registry, or a
	// host it redirected to).
	Host, Port string
	// Addr is the address it resolved to.
	Addr netip.Addr
	// Class says which kind of non-public address it is (loopback,
	// link-local, private, …).
	Class string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("%s is at %s, a %s address, which only a registry named in the allow-list may be at", net.JoinHostPort(e.Host, e.Port), e.Addr, e.Class)
}

// Is makes an AddressError match ErrNotAllowed.
func (e *AddressError) Is(target error) bool { return target == ErrNotAllowed }

// nonPublic are the ranges no connection may reach unless its host is
// named, with the words a message uses for them. Link-local holds the
// cloud metadata address 169.254.169.254; the other metadata addresses are
// listed on their own.
var nonPublic = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.100.100.200/32"), "cloud metadata"}, // Alibaba Cloud
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud metadata"}, // Azure WireServer
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved"},                   // IPv4-compatible
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata"}, // AWS over IPv6
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved"}, // local-use NAT64
	{netip.MustParsePrefix("100::/64"), "reserved"},
	{netip.MustParsePrefix("2001::/32"), "reserved"}, // Teredo
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},
}

// nat64 and sixToFour carry an IPv4 address inside an IPv6 one; the IPv4
// address decides.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// addrClass returns the kind of non-public address a is, or "" for a
// public one.
func addrClass(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return "invalid"
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return addrClass(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return addrClass(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	return ""
}

// guard opens the client's connections under the address rule.
type guard struct {
	p *policy
}

// dial connects to addr, refusing, before connect(2), a resolved address
// that is not public when addr's host is not named.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	if !g.p.named(host, port) {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &AddressError{Host: host, Port: port, Class: "unrecognised"}
			}
			if c := addrClass(ap.Addr()); c != "" {
				return &AddressError{Host: host, Port: port, Addr: ap.Addr().WithZone(""), Class: c}
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}

// plainHTTPError is a TLS handshake answered by an HTTP response: the
// registry speaks plain HTTP.
type plainHTTPError struct{ err error }

func (e *plainHTTPError) Error() string {
	return "the server answered the TLS handshake with HTTP: " + e.err.Error()
}
func (e *plainHTTPError) Unwrap() error { return e.err }

// dialTLS connects as dial does and completes the TLS handshake, so that a
// registry answering in plain HTTP is told apart by type, not by text.
func (g *guard) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	raw, err := g.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(raw, &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		if rh, ok := errors.AsType[tls.RecordHeaderError](err); ok && string(rh.RecordHeader[:]) == "HTTP/" {
			return nil, &plainHTTPError{err: err}
		}
		return nil, err
	}
	return tc, nil
}

// redirectError is a redirect the client does not follow.
type redirectError struct {
	from, to string
	reason   string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("redirect from %s to %s refused: %s", e.from, e.to, e.reason)
}

// checkRedirect refuses a downgrade from HTTPS to HTTP and long chains;
// where a redirect may go is the dial guard's decision, on the address.
func checkRedirect(req *http.Request, via []*http.Request) error {
	switch {
	case len(via) >= maxRedirects:
		return &redirectError{from: via[0].URL.Host, to: req.URL.Host, reason: fmt.Sprintf("more than %d redirects", maxRedirects)}
	case via[0].URL.Scheme == "https" && req.URL.Scheme != "https":
		return &redirectError{from: via[0].URL.Host, to: req.URL.Host, reason: "it leaves HTTPS for plain HTTP"}
	}
	return nil
}

// guardedTransport checks, before a request is sent, a host written as an
// IP address: through a proxy, the dial guard sees only the proxy.
type guardedTransport struct {
	p    *policy
	base http.RoundTripper
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "443"
		if req.URL.Scheme == "http" {
			port = "80"
		}
	}
	if a, err := netip.ParseAddr(host); err == nil && !t.p.named(host, port) {
		if c := addrClass(a); c != "" {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, &AddressError{Host: host, Port: port, Addr: a.WithZone(""), Class: c}
		}
	}
	return t.base.RoundTrip(req)
}

// newTransport is the HTTP transport every connection of a client goes
// through: the environment's proxies, the dial guard, no implicit TLS
// configuration.
func newTransport(p *policy, proxy func(*url.URL) (*url.URL, error)) http.RoundTripper {
	g := &guard{p: p}
	t := &http.Transport{
		Proxy: func(r *http.Request) (*url.URL, error) {
			if proxy == nil {
				return nil, nil
			}
			return proxy(r.URL)
		},
		DialContext:           g.dial,
		DialTLSContext:        g.dialTLS,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   10,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &guardedTransport{p: p, base: t}
}

// transports are shared by the clients of one policy, as the clients of
// http.DefaultTransport share its connection pool: the reconciler builds a
// client per pull Secret and reconcile, and each would otherwise keep its
// own idle connections to the same registries. Few policies exist in one
// process (one per option group); past maxTransports a client gets a
// transport of its own.
var transports struct {
	mu sync.Mutex
	m  map[string]http.RoundTripper
}

const maxTransports = 64

// sharedTransport returns the transport of p (with retries, or not),
// building it the first time.
func sharedTransport(p *policy, proxy func(*url.URL) (*url.URL, error), proxies []string, retries bool) http.RoundTripper {
	build := func() http.RoundTripper {
		t := newTransport(p, proxy)
		if retries {
			t = retry.NewTransport(t)
		}
		// Each request carries the trace context of the call that sends it.
		return tracing.Transport(t)
	}
	key := fmt.Sprintf("%t|%q|%q", retries, p.entries, proxies)
	transports.mu.Lock()
	defer transports.mu.Unlock()
	if t, ok := transports.m[key]; ok {
		return t
	}
	if transports.m == nil {
		transports.m = map[string]http.RoundTripper{}
	}
	if len(transports.m) >= maxTransports {
		return build()
	}
	t := build()
	transports.m[key] = t
	return t
}

// environmentProxies returns the proxy function of the environment and the
// host:port of each proxy it names (HTTPS_PROXY, HTTP_PROXY).
func environmentProxies() (func(*url.URL) (*url.URL, error), []string) {
	cfg := httpproxy.FromEnvironment()
	var hosts []string
	for _, s := range []string{cfg.HTTPSProxy, cfg.HTTPProxy} {
		if s == "" {
			continue
		}
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "socks5": "1080"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		hosts = append(hosts, net.JoinHostPort(canonicalHost(u.Hostname()), port))
	}
	return cfg.ProxyFunc(), hosts
}
