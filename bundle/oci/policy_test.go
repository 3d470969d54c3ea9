package oci_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/testregistry"
)

// foreignHost is a loopback address other than 127.0.0.1: on Linux the
// whole of 127.0.0.0/8 is the loopback interface, so it stands for
// another host without any setup.
const foreignHost = "127.0.0.2"

// countingListener accepts connections on addr, counts them and closes
// them at once: a port that is open, and a way to prove that nothing
// connected to it.
func countingListener(t *testing.T, addr string) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String(), &n
}

// stallingListener accepts connections and never answers.
func stallingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// logLines is a logger that keeps what it is given.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// rawText are fragments of transport, TLS and registry text that no error
// a Client returns may carry.
var rawText = []string{"dial tcp", "connect:", "server gave HTTP", "x509", "tls:", "http: ", `Get "`, `Head "`, "response status code", "first record"}

func checkSentence(t *testing.T, err error, want ...string) {
	t.Helper()
	msg := err.Error()
	for _, raw := range rawText {
		if strings.Contains(msg, raw) {
			t.Errorf("error %q carries raw text %q", msg, raw)
		}
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

func problemOf(t *testing.T, err error) *oci.RegistryError {
	t.Helper()
	re, ok := errors.AsType[*oci.RegistryError](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *oci.RegistryError", err, err)
	}
	return re
}

// TestAllowListRefusesUnnamedRegistry: a registry on another host that the
// allow-list does not name is refused before anything is sent to it, with
// a sentence naming the flag and what is allowed; listed, it is pulled.
func TestAllowListRefusesUnnamedRegistry(t *testing.T) {
	foreign := testregistry.New(t, &testregistry.Options{Addr: foreignHost + ":0"})
	ref := mustRef(t, "oci://"+foreign.Host+"/acme/orders:1.2.0")
	setup := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{foreign.Host}})
	if _, err := setup.Push(t.Context(), ref, newImage(t, ordersFiles, ordersLabels)); err != nil {
		t.Fatal(err)
	}
	foreign.ResetRequests()

	var logs logLines
	refused := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{"127.0.0.1", "ghcr.io"}, Logger: logs.logger()})
	for name, call := range map[string]func() error{
		"Pull":    func() error { _, err := refused.Pull(t.Context(), ref); return err },
		"Resolve": func() error { _, err := refused.Resolve(t.Context(), ref); return err },
		"Push": func() error {
			_, err := refused.Push(t.Context(), ref, newImage(t, ordersFiles, ordersLabels))
			return err
		},
	} {
		err := call()
		if !errors.Is(err, oci.ErrNotAllowed) || problemOf(t, err).Problem != oci.ProblemNotAllowed {
			t.Fatalf("%s of an unlisted registry: %v, want ErrNotAllowed (ProblemNotAllowed)", name, err)
		}
		checkSentence(t, err, "registry "+foreign.Host+" is not allowed", "--allowed-registries", "allowed: 127.0.0.1, ghcr.io")
	}
	if got := foreign.Requests(); len(got) != 0 {
		t.Errorf("the refused registry received %v, want nothing", got)
	}

	listed := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{foreign.Host}})
	if _, err := listed.Pull(t.Context(), ref); err != nil {
		t.Fatalf("Pull from the listed registry: %v", err)
	}
}

// TestAnyRegistryDialsOnlyPublicAddresses: "*" admits every registry name,
// but a connection to a loopback address — written as an IP or behind a
// DNS name — is refused at dial time, before connect, unless the host is
// named. The counting listener shows that nothing connected, and that
// naming the host lets the connection through.
func TestAnyRegistryDialsOnlyPublicAddresses(t *testing.T) {
	addr, accepted := countingListener(t, foreignHost+":0")
	_, port, _ := net.SplitHostPort(addr)
	anyRegistry := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{oci.AnyRegistry}})
	for _, registry := range []string{addr, "localhost:" + port} {
		_, err := anyRegistry.Resolve(t.Context(), mustRef(t, "oci://"+registry+"/acme/orders:1.2.0"))
		re := problemOf(t, err)
		if re.Problem != oci.ProblemAddress || re.AddrClass != "loopback" || !errors.Is(err, oci.ErrNotAllowed) {
			t.Errorf("%s through %q: %v (%s, %q), want ProblemAddress at a loopback address", registry, oci.AnyRegistry, err, re.Problem, re.AddrClass)
		}
		checkSentence(t, err, "a loopback address", "--allowed-registries (registry.allowedRegistries in the chart) itself, not through \"*\"", "name "+registry+" there")
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached %s through %q, want 0", n, addr, oci.AnyRegistry)
	}

	// The cloud metadata address: no listener can be there, so the error
	// class is what shows that it was refused before connect.
	_, err := anyRegistry.Resolve(t.Context(), mustRef(t, "oci://169.254.169.254/latest:1"))
	if re := problemOf(t, err); re.Problem != oci.ProblemAddress || re.AddrClass != "cloud metadata" {
		t.Errorf("169.254.169.254: %v (%s, %q), want ProblemAddress, cloud metadata", err, re.Problem, re.AddrClass)
	}
	var ae *oci.AddressError
	if !errors.As(err, &ae) || ae.Addr.String() != "169.254.169.254" {
		t.Errorf("169.254.169.254: %v, want an AddressError for that address", err)
	}

	named := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{addr}, NoRetry: true})
	_, _ = named.Resolve(t.Context(), mustRef(t, "oci://"+addr+"/acme/orders:1.2.0"))
	if accepted.Load() == 0 {
		t.Errorf("naming %s in the allow-list: no connection reached it", addr)
	}
}

// redirector answers every request with a redirect to target.
func redirector(t *testing.T, target string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestRedirectToRefusedAddress: an allowed registry that redirects to a
// loopback host it does not name, or to the metadata address, gets no
// connection there.
func TestRedirectToRefusedAddress(t *testing.T) {
	addr, accepted := countingListener(t, foreignHost+":0")
	front := redirector(t, "http://"+addr)
	ref := mustRef(t, "oci://"+front+"/acme/orders:1.2.0")
	c := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{front}})
	_, err := c.Pull(t.Context(), ref)
	re := problemOf(t, err)
	if re.Problem != oci.ProblemAddress || re.Host != addr {
		t.Fatalf("redirect to %s: %v (%s, host %q), want ProblemAddress for it", addr, err, re.Problem, re.Host)
	}
	checkSentence(t, err, "registry "+front+" sent the request on to "+addr, "name "+addr+" there")
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached %s through a redirect, want 0", n, addr)
	}

	meta := redirector(t, "http://169.254.169.254")
	_, err = newClient(t, &oci.ClientOptions{AllowedRegistries: []string{meta}}).Resolve(t.Context(), mustRef(t, "oci://"+meta+"/acme/orders:1.2.0"))
	if re := problemOf(t, err); re.Problem != oci.ProblemAddress || re.AddrClass != "cloud metadata" {
		t.Errorf("redirect to 169.254.169.254: %v (%s, %q), want ProblemAddress, cloud metadata", err, re.Problem, re.AddrClass)
	}

	// Named, the redirect target is reached: the counter counts.
	both := newClient(t, &oci.ClientOptions{AllowedRegistries: []string{front, addr}, NoRetry: true})
	_, _ = both.Pull(t.Context(), ref)
	if accepted.Load() == 0 {
		t.Error("with the redirect target named, no connection reached it")
	}
}

// TestRegistryErrorsAreSentences: each way of failing to reach a registry
// is a sentence with its remedy; the transport's own text goes to the
// log only.
func TestRegistryErrorsAreSentences(t *testing.T) {
	plain := testregistry.New(t, nil)
	untrusted := testregistry.New(t, &testregistry.Options{TLS: true})
	stalled := stallingListener(t)
	refused := freeport.ClosedAddr(t)
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "backend exploded at 10.0.0.7", http.StatusServiceUnavailable)
	}))
	t.Cleanup(unavailable.Close)
	down := strings.TrimPrefix(unavailable.URL, "http://")

	for _, tc := range []struct {
		name      string
		registry  string
		plainHTTP bool
		timeout   time.Duration
		problem   oci.Problem
		want      []string
		logged    string
	}{
		{"plain HTTP registry over HTTPS", plain.Host, false, 0, oci.ProblemPlainHTTP,
			[]string{"answered over plain HTTP", "pass --plain-http (registry.plainHTTP in the chart) if that registry is trusted"}, "first record does not look like a TLS handshake"},
		{"untrusted certificate", untrusted.Host, false, 0, oci.ProblemTLS,
			[]string{"signed by an authority the system does not trust"}, "x509"},
		{"nothing listening", refused, true, 0, oci.ProblemConnectionRefused,
			[]string{"nothing accepts connections at registry " + refused, "check its host and port"}, "connection refused"},
		{"stalled registry", stalled, true, 300 * time.Millisecond, oci.ProblemTimeout,
			[]string{"did not answer within 300ms (--registry-timeout)", "raise --registry-timeout"}, "deadline exceeded"},
		{"registry failing", down, true, 0, oci.ProblemStatus,
			[]string{"failed to answer (HTTP 503 Service Unavailable): retry later"}, "503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logLines
			c, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: tc.plainHTTP, AllowedRegistries: []string{tc.registry}, Timeout: tc.timeout,
				NoRetry: true, DockerConfigJSON: []byte(`{"auths":{}}`), Logger: logs.logger()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Pull(t.Context(), mustRef(t, "oci://"+tc.registry+"/acme/orders:1.2.0"))
			if re := problemOf(t, err); re.Problem != tc.problem {
				t.Fatalf("%v: problem %s, want %s", err, re.Problem, tc.problem)
			}
			checkSentence(t, err, tc.want...)
			if strings.Contains(err.Error(), "10.0.0.7") {
				t.Errorf("error %q repeats the registry's own text", err)
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("the log does not keep the failure as reported (%q):\n%s", tc.logged, logs.String())
			}
		})
	}
}
