//go:build !sidecaronly

package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/testregistry"
)

// rawTransportText are fragments of Go's, the TLS library's and oras'
// own text that no answer may carry.
var rawTransportText = []string{"dial tcp", "connect:", "server gave HTTP", "first record does not look like", "x509:", "tls:", "response status code", `Get "`, `Head "`}

// countConns listens on addr and counts the connections it accepts
// (closing each at once): a host standing for another machine, and proof
// that nothing connected to it.
func countConns(t *testing.T, addr string) (net.Listener, *atomic.Int64) {
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
	return ln, &n
}

// impactAnswer calls pacto_impact with old_ref and the served bundle
// itself as new_ref, and returns the error envelope (nil on success) and
// the text.
func impactAnswer(t *testing.T, cs *sdk.ClientSession, oldRef, newRef string) (map[string]any, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_impact", Arguments: map[string]any{"old_ref": oldRef, "new_ref": newRef}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if !res.IsError {
		return nil, text.String()
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Error == nil {
		t.Fatalf("pacto_impact error without an envelope: %s", raw)
	}
	return env.Error, text.String()
}

func noRawText(t *testing.T, what, s string) {
	t.Helper()
	for _, raw := range rawTransportText {
		if strings.Contains(s, raw) {
			t.Errorf("%s carries raw transport text %q: %s", what, raw, s)
		}
	}
}

// TestMCPRegistryAllowList: `kubepact mcp` reaches only the registries it
// was given on the command line or in --allowed-registries. A registry on
// another host (127.0.0.2) that is not listed is refused with a sentence
// naming the flag, and receives nothing; listed, it is pulled from.
func TestMCPRegistryAllowList(t *testing.T) {
	foreign := testregistry.New(t, &testregistry.Options{Addr: "127.0.0.2:0"})
	ref := "oci://" + foreign.Host + "/bundles/payments:3.0.2"
	payments := filepath.Join(repoRoot(t), "examples", "bundles", "payments")
	if _, stderr, code := runKubepact(t, "push", payments, ref, "--plain-http"); code != 0 {
		t.Fatalf("push to the registry the command names: exit %d: %s", code, stderr)
	}
	foreign.ResetRequests()
	local := []string{"--local", filepath.Join(repoRoot(t), "examples", "bundles"), "--plain-http"}

	cs, _ := startFleet(t, local...)
	e, text := impactAnswer(t, cs, ref, ref)
	if e == nil || e["code"] != "REGISTRY_NOT_ALLOWED" || !strings.Contains(text, "registry "+foreign.Host+" is not allowed here") || !strings.Contains(text, "--allowed-registries") {
		t.Fatalf("an unlisted registry: %v %s; want REGISTRY_NOT_ALLOWED naming --allowed-registries", e, text)
	}
	if got := foreign.Requests(); len(got) != 0 {
		t.Errorf("the unlisted registry received %v, want nothing", got)
	}

	cs, stderr := startFleet(t, append(local, "--allowed-registries", foreign.Host)...)
	if e, text := impactAnswer(t, cs, ref, ref); e != nil || !strings.Contains(text, "payments 3.0.2 → 3.0.2 is NON_BREAKING") {
		t.Errorf("with --allowed-registries %s: %v %s\n%s", foreign.Host, e, text, stderr)
	}
}

// TestMCPRegistryAddressRule: "*" admits any registry name, never a
// loopback or metadata address; a redirect from an allowed registry to a
// host it does not name is refused at dial time — the counting listener
// on 127.0.0.2 sees no connection.
func TestMCPRegistryAddressRule(t *testing.T) {
	ln, accepted := countConns(t, "127.0.0.2:0")
	target := ln.Addr().String()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	frontHost := strings.TrimPrefix(front.URL, "http://")
	cs, stderr := startFleet(t, "--local", filepath.Join(repoRoot(t), "examples", "bundles"), "--plain-http",
		"--allowed-registries", "*,"+frontHost)

	for _, tc := range []struct {
		ref, want string
	}{
		{"oci://" + target + "/acme/x:1", "registry " + target + " was not contacted: it is at a loopback address"},
		{"oci://169.254.169.254/latest:1", "it is at a cloud metadata address"},
		{"oci://" + frontHost + "/acme/x:1", "registry " + frontHost + " sent the request on to " + target + ", which is at a loopback address"},
	} {
		e, text := impactAnswer(t, cs, tc.ref, "payments")
		if e == nil || e["code"] != "REGISTRY_NOT_ALLOWED" || !strings.Contains(text, tc.want) || !strings.Contains(text, "--allowed-registries") {
			t.Errorf("old_ref %s: %v %s; want REGISTRY_NOT_ALLOWED saying %q", tc.ref, e, text, tc.want)
		}
		noRawText(t, "the answer", text)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections reached %s, want 0\n%s", n, target, stderr)
	}
}

// TestMCPServesItsOwnRegistry: the registry of the bundle given on the
// command line is allowed without any flag, even on loopback.
func TestMCPServesItsOwnRegistry(t *testing.T) {
	reg := testregistry.New(t, nil)
	ref := "oci://" + reg.Host + "/bundles/catalog:1.4.0"
	if _, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), ref, "--plain-http"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	out, stderr, code := runKubepact(t, "check", ref, "--plain-http", "-o", "json")
	if code != 0 {
		t.Fatalf("check %s: exit %d\n%s\n%s", ref, code, out, stderr)
	}
	cs, stderr2 := startFleet(t, "--oci", ref, "--plain-http")
	if e, text := impactAnswer(t, cs, ref, ref); e != nil {
		t.Errorf("impact of the --oci source's own ref: %v %s\n%s", e, text, stderr2)
	}
}

// TestRegistryErrorsInAnswers: a plain-HTTP registry reached without
// --plain-http answers with the sentence and its remedy, nothing of the
// transport's own text; the log keeps that.
func TestRegistryErrorsInAnswers(t *testing.T) {
	reg := testregistry.New(t, nil)
	ref := "oci://" + reg.Host + "/bundles/payments:3.0.2"
	cs, stderr := startFleet(t, "--local", filepath.Join(repoRoot(t), "examples", "bundles"), "--allowed-registries", reg.Host, "--log-level", "info")
	e, text := impactAnswer(t, cs, ref, "payments")
	if e == nil || e["code"] != "UNAVAILABLE" || !strings.Contains(text, "registry "+reg.Host+" answered over plain HTTP: pass --plain-http (registry.plainHTTP in the chart) if that registry is trusted") {
		t.Fatalf("a plain-HTTP registry over HTTPS: %v %s", e, text)
	}
	noRawText(t, "the answer", text)
	// stderr is copied from the process by another goroutine: wait for it
	// (the bound only ends a test that would fail anyway).
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "first record does not look like a TLS handshake"); {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not keep the failure as reported:\n%s", stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
