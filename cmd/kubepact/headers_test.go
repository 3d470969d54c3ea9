//go:build !sidecaronly

package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/test/demoservice"
)

// A 2026-07-28 request names its method, and for tools/call its tool, in
// the Mcp-Method and Mcp-Name headers as well as in its body. A proxy, a
// gateway or a rate limiter in front routes and counts on the headers; the
// server runs the body. The hostile caller is a client that lies in one of
// them, leaves one out, or sends one twice (a reader of the first line and
// a reader of the last disagree): each is refused with 400 and the
// HeaderMismatch error (-32020) saying what to send, and nothing is run.

// headerCase is one request of the lying client.
type headerCase struct {
	name    string
	headers [][2]string // added in order; a name twice sends it twice
	body    string      // "" is the shape's call
	// wantOK: the call is answered (200 with a result); otherwise 400 with
	// -32020 and a message containing want.
	wantOK bool
	want   string
}

// stateless is the protocol version of the standard headers.
const stateless = "2026-07-28"

// callBody is a 2026-07-28 tools/call of tool with args.
func callBody(tool string, args map[string]any) string {
	raw, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": stateless, "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	if err != nil {
		panic(err)
	}
	return string(raw)
}

func headerCases(tool, other string) []headerCase {
	v := [2]string{"Mcp-Protocol-Version", stateless}
	m := [2]string{"Mcp-Method", "tools/call"}
	n := [2]string{"Mcp-Name", tool}
	return []headerCase{
		{name: "all three match", headers: [][2]string{v, m, n}, wantOK: true},
		{name: "Mcp-Name base64-encoded", headers: [][2]string{v, m, {"Mcp-Name", "=?base64?" + base64.StdEncoding.EncodeToString([]byte(tool)) + "?="}}, wantOK: true},
		{name: "Mcp-Method says tools/list", headers: [][2]string{v, {"Mcp-Method", "tools/list"}, n},
			want: `the Mcp-Method header says "tools/list" but the body's method is "tools/call"`},
		{name: "Mcp-Method in another case", headers: [][2]string{v, {"Mcp-Method", "TOOLS/CALL"}, n}, want: `methods are case-sensitive`},
		{name: "Mcp-Name names another tool", headers: [][2]string{v, m, {"Mcp-Name", other}},
			want: fmt.Sprintf(`the Mcp-Name header says %q but the body's params.name is %q`, other, tool)},
		{name: "no Mcp-Method", headers: [][2]string{v, n}, want: "the Mcp-Method header is missing"},
		{name: "no Mcp-Name", headers: [][2]string{v, m}, want: fmt.Sprintf("the Mcp-Name header is missing; a tools/call request carries it with its params.name (here Mcp-Name: %q)", tool)},
		{name: "Mcp-Name twice, the first true", headers: [][2]string{v, m, n, {"Mcp-Name", other}}, want: "the Mcp-Name header 2 times; send it once"},
		{name: "Mcp-Method twice, the first true", headers: [][2]string{v, m, {"Mcp-Method", "tools/list"}, n}, want: "the Mcp-Method header 2 times"},
		{name: "Mcp-Name not base64", headers: [][2]string{v, m, {"Mcp-Name", "=?base64?@@?="}}, want: "is not valid base64"},
		{name: "no Mcp-Protocol-Version, _meta says 2026-07-28", headers: [][2]string{m, n},
			want: `params._meta says protocol "2026-07-28" but the request has no Mcp-Protocol-Version header`},
		{name: "Mcp-Protocol-Version 2025-11-25, _meta says 2026-07-28", headers: [][2]string{{"Mcp-Protocol-Version", "2025-11-25"}, m, n},
			want: `has the Mcp-Protocol-Version header "2025-11-25"`},
	}
}

// checkHeaderCases sends every case to url (with token, if any) and checks
// the answers.
func checkHeaderCases(t *testing.T, url, token string, cases []headerCase, call string) {
	t.Helper()
	for _, c := range cases {
		body := c.body
		if body == "" {
			body = call
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for _, h := range c.headers {
			req.Header.Add(h[0], h[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(raw)
		if c.wantOK {
			if resp.StatusCode != http.StatusOK || !strings.Contains(got, `"result"`) || strings.Contains(got, `"isError":true`) {
				t.Errorf("%s: %d %s, want 200 with a result", c.name, resp.StatusCode, got)
			}
			continue
		}
		var answer struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &answer); err != nil || resp.StatusCode != http.StatusBadRequest || answer.Error.Code != -32020 || string(answer.ID) != "7" {
			t.Errorf("%s: %d %s, want 400 with error -32020 and id 7", c.name, resp.StatusCode, got)
			continue
		}
		if !strings.Contains(answer.Error.Message, c.want) {
			t.Errorf("%s: the message %q does not say %q", c.name, answer.Error.Message, c.want)
		}
	}
}

// TestStandardHeadersOnMCPAndSidecar: `kubepact mcp -t http` and
// `kubepact sidecar` refuse the lying client before the tool runs — the
// service behind them sees only the calls whose headers were true.
func TestStandardHeadersOnMCPAndSidecar(t *testing.T) {
	for _, shape := range httpShapes {
		t.Run(shape.name, func(t *testing.T) {
			var calls atomic.Int32
			demo := demoservice.New(nil)
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				demo.ServeHTTP(w, r)
			}))
			t.Cleanup(upstream.Close)
			p := shape.start(t, upstream.URL)
			cases := headerCases("listProducts", "getProduct")
			checkHeaderCases(t, p.mcpURL, "", cases, callBody("listProducts", map[string]any{"limit": 1}))
			// The two true calls reached the service; no lie did.
			if got := calls.Load(); got != 2 {
				t.Errorf("the service received %d calls, want 2 (the calls whose headers were true)", got)
			}
			if t.Failed() {
				t.Logf("%s log:\n%s", shape.name, p.stderr)
			}
		})
	}
}

// TestStandardHeadersOnOperator: the operator's /mcp, behind TokenReview,
// holds an authenticated caller's 2026-07-28 requests to the same rules.
func TestStandardHeadersOnOperator(t *testing.T) {
	admin, _, kubeconfigFile := operatorCluster(t, "kubepact-operator-headers-test")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "headers-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	token := serviceAccountToken(t, admin, ns.Name, "reader", true)

	op := startOperator(t, kubeconfigFile, "--graceful-shutdown-timeout", "5s", "--log-format", "json")
	mcpAddr, logs := op.mcpAddr, op.logs

	checkHeaderCases(t, "http://"+mcpAddr+"/mcp", token, headerCases("pacto_fleet_status", "pacto_fleet_search"), callBody("pacto_fleet_status", map[string]any{}))
	if t.Failed() {
		t.Logf("operator log:\n%s", logs.String())
	}
}
