package mcp

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/freeport"
)

// TestServiceCallFailuresInWords: a generated tool whose service gives no
// complete response answers, in its text and its failure, which service
// did not answer, how, and what to do — never the transport's own text
// (dial tcp …: connect: connection refused, tls: …, x509: …, EOF), which
// goes to the server's log instead.
func TestServiceCallFailuresInWords(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(plain.Close)
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the client refuses
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	hangUp := hangingUpServer(t)
	refused := freeport.ClosedAddr(t)
	for _, tc := range []struct {
		name, base, want string
	}{
		{"connection refused", "http://" + refused,
			"the service at http://" + refused + " is not answering: nothing accepts connections on " + refused + " (connection refused); start the service, or point the server's base URL at where it runs"},
		{"plain HTTP behind an https URL", "https://" + strings.TrimPrefix(plain.URL, "http://"),
			"the service at https://" + strings.TrimPrefix(plain.URL, "http://") + " answers plain HTTP, not HTTPS; use an http:// base URL"},
		{"an untrusted certificate", untrusted.URL,
			"the service at " + untrusted.URL + " was not trusted: its TLS certificate does not verify"},
		{"a connection closed before the answer", "http://" + hangUp,
			"the service at http://" + hangUp + " closed the connection before it answered in full; see the service's log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logSink{}
			s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: tc.base}, &Options{Logger: logs.logger()})
			res := callTool(t, connect(t.Context(), t, s), "listProducts", map[string]any{})
			sc := structured(t, res)
			if !res.IsError || sc["status"] != float64(0) || !strings.Contains(sc["failure"].(string), tc.want) {
				t.Fatalf("isError %v, status %v, failure %q; want %q", res.IsError, sc["status"], sc["failure"], tc.want)
			}
			if got := text(res); !strings.HasPrefix(got, "GET /products did not complete: "+tc.want) {
				t.Errorf("text %q does not start with the failure", got)
			}
			for _, raw := range []string{"dial tcp", "connect:", "tls:", "x509", "EOF", "http: ", "read tcp"} {
				if strings.Contains(sc["failure"].(string), raw) || strings.Contains(text(res), raw) {
					t.Errorf("transport text %q reaches the caller: %s", raw, text(res))
				}
			}
			if lines := logs.matching(`"cause"`); len(lines) != 1 {
				t.Errorf("the audit line does not carry the transport's error: %v", logs.matching("Tool call"))
			}
		})
	}
}

// hangingUpServer accepts connections and closes each at once, before any
// response; it returns its address.
func hangingUpServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			_ = c.Close()
		}
	}()
	return ln.Addr().String()
}
