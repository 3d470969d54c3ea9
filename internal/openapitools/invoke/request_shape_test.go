package invoke

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestCredentialInQueryIsWithheld: a credential whose scheme puts it in
// the URL query is sent only when the operator allows it; otherwise an
// operation with no other way to send the credentials given is withheld,
// and nothing reaches the service.
func TestCredentialInQueryIsWithheld(t *testing.T) {
	srv := newEcho(t)
	c := projectStyles(t, &openapitools.Options{BaseURL: srv.URL + "/base", Auth: []string{"queryKey=q"}})
	w := withheldBy(c, openapitools.WithheldCredentialInQuery)
	if len(w) != 1 || !strings.Contains(w["secure"], `scheme queryKey in the URL query parameter "api_key"`) || !strings.Contains(w["secure"], "AllowCredentialsInQuery") {
		t.Fatalf("withheld CREDENTIAL_IN_QUERY: %v; want secure, naming the scheme, the parameter and AllowCredentialsInQuery", w)
	}
	if c.Tool("secure") != nil {
		t.Error("secure is offered")
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "would send a credential in the URL query") {
		t.Errorf("warnings %q do not say so", c.Warnings)
	}
	// Allowed: offered, and the key goes in the query.
	c = projectStyles(t, &openapitools.Options{BaseURL: srv.URL + "/base", Auth: []string{"queryKey=q"}, AllowCredentialsInQuery: true})
	res, err := callTool(t, c, "secure", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if e := echoOf(t, res); e.Query != "api_key=q" {
		t.Errorf("with AllowCredentialsInQuery the query is %q; want api_key=q", e.Query)
	}
	// No credential given: nothing is withheld for it.
	if w := withheldBy(projectStyles(t, nil), openapitools.WithheldCredentialInQuery); len(w) != 0 {
		t.Errorf("without credentials, withheld %v", w)
	}
}

// TestOrdinaryHeaderParamIsSent: beside operations whose hop-by-hop or
// framing header parameters get them no tool (openapitools'
// TestHopByHopHeaderParamsAreRefused), an ordinary header parameter is
// sent as given.
func TestOrdinaryHeaderParamIsSent(t *testing.T) {
	names := []string{"Connection", "Keep-Alive", "Transfer-Encoding", "TE", "Trailer", "Upgrade", "Proxy-Authorization", "Proxy-Connection", "host", "Content-Length"}
	var doc strings.Builder
	doc.WriteString("openapi: 3.0.3\ninfo: {title: h, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\npaths:\n")
	for i, n := range append(names, "X-Trace") {
		fmt.Fprintf(&doc, "  /h%d:\n    get:\n      operationId: op%d\n      parameters: [{name: %s, in: header, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n", i, i, n)
	}
	srv := newEcho(t)
	c, err := projectSpec(t, "h", "h.yaml", []byte(doc.String()), &openapitools.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("op%d", len(names))
	if len(c.Tools) != 1 || c.Tools[0].Name != last {
		t.Fatalf("tools %v; want only %s (X-Trace)", toolNames(c), last)
	}
	res, err := callTool(t, c, last, `{"X-Trace": "t-1"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := echoOf(t, res).Header["X-Trace"]; got != "t-1" {
		t.Errorf("X-Trace sent as %q", got)
	}
}
