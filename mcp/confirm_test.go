package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/demoservice"
)

// demoCounter is the demo catalog service counting the requests it
// receives by method.
type demoCounter struct {
	url  string
	mu   sync.Mutex
	hits map[string]int
}

func newDemoCounter(t *testing.T) *demoCounter {
	t.Helper()
	cs := &demoCounter{hits: map[string]int{}}
	h := demoservice.New(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.hits[r.Method]++
		cs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cs.url = srv.URL
	return cs
}

func (c *demoCounter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[method]
}

// elicitingClient connects a go-sdk client to s in memory on protocol
// version; answer, when not nil, is its elicitation handler (and so its
// declared capability).
func elicitingClient(t *testing.T, s *Server, version string, answer func(*sdk.ElicitRequest) string) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	opts := &sdk.ClientOptions{}
	if answer != nil {
		opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: answer(req)}, nil
		}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "confirm-test", Version: "v0"}, opts).Connect(t.Context(), ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestConfirmedDeletes: with writes allowed, deleteProduct asks the user
// through elicitation; only an accepted request reaches the service.
func TestConfirmedDeletes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string
		answer  string // "" = the client declares no elicitation
		sent    bool
		reason  string
	}{
		{name: "accepted", version: "2025-11-25", answer: "accept", sent: true},
		{name: "declined", version: "2025-11-25", answer: "decline", reason: "DECLINED"},
		{name: "cancelled", version: "2025-11-25", answer: "cancel", reason: "CANCELLED"},
		{name: "no elicitation", version: "2025-11-25", reason: "NO_ELICITATION"},
		// 2026-07-28: an input-required result, answered by the retry.
		{name: "accepted/2026", version: "2026-07-28", answer: "accept", sent: true},
		{name: "declined/2026", version: "2026-07-28", answer: "decline", reason: "DECLINED"},
		{name: "no elicitation/2026", version: "2026-07-28", reason: "NO_ELICITATION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := newDemoCounter(t)
			s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, nil)
			var asked []string
			var answer func(*sdk.ElicitRequest) string
			if tc.answer != "" {
				answer = func(req *sdk.ElicitRequest) string {
					asked = append(asked, req.Params.Message)
					return tc.answer
				}
			}
			cs := elicitingClient(t, s, tc.version, answer)
			res := callTool(t, cs, "deleteProduct", map[string]any{"productId": "p-0001"})
			if got := svc.count(http.MethodDelete); got != map[bool]int{true: 1, false: 0}[tc.sent] {
				t.Fatalf("the service received %d DELETE(s); want sent=%v (result: %s)", got, tc.sent, text(res))
			}
			if tc.sent {
				if res.IsError || structured(t, res)["status"] != float64(204) {
					t.Errorf("an accepted delete: %s", text(res))
				}
				if len(asked) != 1 || !strings.Contains(asked[0], "DELETE "+svc.url+"/products/p-0001") {
					t.Errorf("the user was asked %q; want one message showing DELETE %s/products/p-0001", asked, svc.url)
				}
				return
			}
			te, _ := structured(t, res)["error"].(map[string]any)
			if !res.IsError || te["code"] != CodeNotConfirmed || te["reason"] != tc.reason {
				t.Fatalf("got %s; want NOT_CONFIRMED with reason %s", text(res), tc.reason)
			}
			if !strings.Contains(text(res), "Nothing was sent") {
				t.Errorf("the error %q does not say that nothing was sent", text(res))
			}
			// The remedy fits the reason: a client that cannot ask is
			// pointed at the option; a user who said no is not argued with.
			remedy, _ := te["remedy"].(string)
			switch tc.reason {
			case notConfirmedNoAsk:
				if !strings.Contains(remedy, "--confirm-writes=never") || !strings.Contains(remedy, "elicitation") {
					t.Errorf("remedy %q does not name a client with elicitation and --confirm-writes=never", remedy)
				}
			case notConfirmedDeclined, notConfirmedCancelled:
				if strings.Contains(remedy, "--confirm-writes") || strings.Contains(remedy, "supports MCP elicitation") || !strings.Contains(remedy, "call the tool again") {
					t.Errorf("after %s the remedy is %q; want what the agent can do (call again if the user asks), not a server option", tc.reason, remedy)
				}
				if strings.Contains(text(res), "To expose it") || !strings.Contains(text(res), "What to do: "+remedy) {
					t.Errorf("the error text %q does not give the remedy as what to do", text(res))
				}
			}
			if tc.answer != "" && len(asked) != 1 {
				t.Errorf("the user was asked %d time(s); want once", len(asked))
			}
		})
	}
}

// TestConfirmPolicies: never sends without asking; always asks for every
// write and shows the body.
func TestConfirmPolicies(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true, ConfirmWrites: openapitools.ConfirmNever}, nil)
	cs := elicitingClient(t, s, "2025-11-25", func(*sdk.ElicitRequest) string {
		t.Error("asked for confirmation with --confirm-writes=never")
		return "decline"
	})
	if res := callTool(t, cs, "deleteProduct", map[string]any{"productId": "p-0001"}); res.IsError || svc.count(http.MethodDelete) != 1 {
		t.Errorf("never: %s; %d DELETE(s) received", text(res), svc.count(http.MethodDelete))
	}
	info := structured(t, callTool(t, cs, "pacto_server_info", map[string]any{}))
	if g, _ := info["generatedTools"].(map[string]any); g["confirmWrites"] != "never" || len(g["confirmed"].([]any)) != 0 {
		t.Errorf("server info generatedTools %v; want confirmWrites never, none confirmed", g)
	}

	svc = newDemoCounter(t)
	s = capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true, ConfirmWrites: openapitools.ConfirmAlways}, nil)
	var asked string
	cs = elicitingClient(t, s, "2025-11-25", func(req *sdk.ElicitRequest) string { asked = req.Params.Message; return "decline" })
	body := map[string]any{"sku": "SKU-9", "name": "Nine", "price": map[string]any{"currency": "EUR", "amountMinor": 900}}
	res := callTool(t, cs, "createProduct", map[string]any{"body": body})
	if !res.IsError || svc.count(http.MethodPost) != 0 {
		t.Fatalf("always, declined create: %s; %d POST(s) received", text(res), svc.count(http.MethodPost))
	}
	for _, want := range []string{"POST " + svc.url + "/products", "Content-Type: application/json", `"sku":"SKU-9"`} {
		if !strings.Contains(asked, want) {
			t.Errorf("the confirmation %q does not show %q", asked, want)
		}
	}
	// Reads never ask.
	if res := callTool(t, cs, "getProduct", map[string]any{"productId": "p-0001"}); res.IsError {
		t.Errorf("a read under always: %s", text(res))
	}
	info = structured(t, callTool(t, cs, "pacto_server_info", map[string]any{}))
	g, _ := info["generatedTools"].(map[string]any)
	if got := len(g["confirmed"].([]any)); got != 4 {
		t.Errorf("server info confirmed %v; want the four writes", g["confirmed"])
	}
}

// TestConfirmedDeleteOverHTTP: the elicitation travels over a Streamable
// HTTP session of the 2025-11-25 era.
func TestConfirmedDeleteOverHTTP(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	srv := httptest.NewServer(s.httpHandler)
	t.Cleanup(srv.Close)
	var asked atomic.Int32
	c := sdk.NewClient(&sdk.Implementation{Name: "confirm-http", Version: "v0"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL + Endpoint, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res := callTool(t, cs, "deleteProduct", map[string]any{"productId": "p-0002"})
	if res.IsError || asked.Load() != 1 || svc.count(http.MethodDelete) != 1 {
		t.Errorf("over HTTP: %s; asked %d time(s), %d DELETE(s) received", text(res), asked.Load(), svc.count(http.MethodDelete))
	}
}

// TestConfirmationCoversOnlyTheRequestShown: on the 2026-07-28 era the
// retry carries the user's answer; an answer given for one request does
// not send another.
func TestConfirmationCoversOnlyTheRequestShown(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	// The client retries by hand, so it can change the arguments.
	c := sdk.NewClient(&sdk.Implementation{Name: "retry-by-hand", Version: "v0"}, &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := c.Connect(t.Context(), ct, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	first, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "deleteProduct", Arguments: map[string]any{"productId": "p-0001"}})
	if err != nil {
		t.Fatal(err)
	}
	ask, _ := first.InputRequests[confirmInputID].(*sdk.ElicitParams)
	if !first.NeedsInput() || ask == nil || !strings.Contains(ask.Message, "DELETE "+svc.url+"/products/p-0001") || first.RequestState == "" {
		t.Fatalf("first call: needs input %v, asks %+v, state %q; want the confirmation of DELETE p-0001", first.NeedsInput(), ask, first.RequestState)
	}
	accept := sdk.InputResponseMap{confirmInputID: &sdk.ElicitResult{Action: "accept"}}
	retry, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "deleteProduct", Arguments: map[string]any{"productId": "p-0002"},
		InputResponses: accept, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if te, _ := structured(t, retry)["error"].(map[string]any); te["reason"] != notConfirmedRequest {
		t.Errorf("a confirmation of p-0001 retried for p-0002: reason %v; want %s", te["reason"], notConfirmedRequest)
	}
	if !retry.IsError || !strings.Contains(text(retry), "another request") || svc.count(http.MethodDelete) != 0 {
		t.Fatalf("a confirmation of p-0001 retried for p-0002: %s; %d DELETE(s) received", text(retry), svc.count(http.MethodDelete))
	}
	retry, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "deleteProduct", Arguments: map[string]any{"productId": "p-0001"},
		InputResponses: accept, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if retry.IsError || svc.count(http.MethodDelete) != 1 {
		t.Errorf("the confirmed retry: %s; %d DELETE(s) received", text(retry), svc.count(http.MethodDelete))
	}
}

// TestConfirmedDeleteStateless2026: the retry flow over Streamable HTTP,
// served statelessly.
func TestConfirmedDeleteStateless2026(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	srv := httptest.NewServer(s.httpHandler)
	t.Cleanup(srv.Close)
	for _, answer := range []string{"decline", "accept"} {
		c := sdk.NewClient(&sdk.Implementation{Name: "confirm-2026", Version: "v0"}, &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: answer}, nil
			},
		})
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL + Endpoint, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		res := callTool(t, cs, "deleteProduct", map[string]any{"productId": "p-0003"})
		_ = cs.Close()
		want := map[string]int{"decline": 0, "accept": 1}[answer]
		if svc.count(http.MethodDelete) != want || res.IsError != (answer == "decline") {
			t.Errorf("%s over stateless HTTP: %s; %d DELETE(s) received, want %d", answer, text(res), svc.count(http.MethodDelete), want)
		}
		if answer == "decline" {
			wantNotConfirmed(t, res, notConfirmedDeclined)
			if strings.Contains(text(res), "--confirm-writes") {
				t.Errorf("after a declined delete the text points at --confirm-writes: %s", text(res))
			}
		}
	}
}

// retryingByHand connects a 2026-07-28 client that declares elicitation
// but answers input-required results itself (MultiRoundTrip off), so a
// test can send any requestState and answer: what a hostile client does.
// Over HTTP when url is set (with a bearer token when token is), else in
// memory to s.
func retryingByHand(t *testing.T, s *Server, url, token string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "retry-by-hand", Version: "v0"}, &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			t.Error("the server sent an elicitation request on the 2026-07-28 era")
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
	})
	var transport sdk.Transport
	if url != "" {
		hc := &http.Client{}
		if token != "" {
			hc.Transport = bearer{token: token, next: http.DefaultTransport}
		}
		transport = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}
	} else {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := s.SDK().Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		transport = ct
	}
	cs, err := c.Connect(t.Context(), transport, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// askState makes the first call of a confirmed tool and returns the
// confirmation state the server answers input-required with.
func askState(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("the first call of %s: %s, needs input %v; want input-required with a request state", tool, text(res), res.NeedsInput())
	}
	return res.RequestState
}

// retryWith retries tool with the user's answer and state.
func retryWith(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, answer, state string) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args,
		InputResponses: sdk.InputResponseMap{confirmInputID: &sdk.ElicitResult{Action: answer}}, RequestState: state})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantNotConfirmed fails unless res is NOT_CONFIRMED with reason.
func wantNotConfirmed(t *testing.T, res *sdk.CallToolResult, reason string) {
	t.Helper()
	if !res.IsError {
		t.Errorf("got a result (%s); want NOT_CONFIRMED %s", text(res), reason)
		return
	}
	te, _ := structured(t, res)["error"].(map[string]any)
	if te["code"] != CodeNotConfirmed || te["reason"] != reason {
		t.Errorf("got %s; want NOT_CONFIRMED with reason %s", text(res), reason)
	}
	if te["remedy"] == "" || !strings.Contains(text(res), "Nothing was sent") {
		t.Errorf("the error %q does not say that nothing was sent and what to do", text(res))
	}
}

// stateOfMain is the request state a client can compute for itself, as
// the server once accepted it: "confirm-" and the SHA-256 of the request
// it would send. A forger needs no question from the server to make it.
func stateOfMain(tool, method, url string) string {
	h := sha256.New()
	for _, part := range []string{tool, method, url} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	for _, kv := range [][2]string{{"Accept", "application/json, */*;q=0.5"}, {"User-Agent", "kubepact"}} {
		fmt.Fprintf(h, "%d:%s%d:%s", len(kv[0]), kv[0], len(kv[1]), kv[1])
	}
	fmt.Fprintf(h, "%d:", 0)
	return "confirm-" + hex.EncodeToString(h.Sum(nil))
}

// TestConfirmationStateStateless2026: over stateless Streamable HTTP,
// a client that replays a confirmed delete, or that makes up or alters
// the confirmation state without the server ever asking, sends nothing;
// only the state the server issued, answered once, sends the request,
// and only for the arguments it was issued for.
func TestConfirmationStateStateless2026(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	srv := httptest.NewServer(s.httpHandler)
	t.Cleanup(srv.Close)
	cs := retryingByHand(t, s, srv.URL+Endpoint, "")
	p1 := map[string]any{"productId": "p-0001"}

	// Forged: never asked for, made up, or altered.
	issued := askState(t, cs, "deleteProduct", p1)
	altered := []byte(issued)
	altered[len(altered)/2] ^= 1
	for name, state := range map[string]string{
		"no state":               "",
		"computed by the client": stateOfMain("deleteProduct", http.MethodDelete, svc.url+"/products/p-0001"),
		"random":                 "kpc1." + strings.Repeat("A", len(issued)-len("kpc1.")),
		"altered":                string(altered),
		"truncated":              issued[:len(issued)-4],
	} {
		wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", p1, "accept", state), notConfirmedForged)
		if n := svc.count(http.MethodDelete); n != 0 {
			t.Fatalf("a retry with a %s state sent %d DELETE(s)", name, n)
		}
	}

	// Issued for p-0001: not good for p-0002.
	wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", map[string]any{"productId": "p-0002"}, "accept", issued), notConfirmedRequest)
	// The answer the state was issued for: sent, once.
	if res := retryWith(t, cs, "deleteProduct", p1, "accept", issued); res.IsError || svc.count(http.MethodDelete) != 1 {
		t.Fatalf("the confirmed retry: %s; %d DELETE(s) received, want 1", text(res), svc.count(http.MethodDelete))
	}
	// Replayed: the same state and answer again.
	wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", p1, "accept", issued), notConfirmedReplayed)
	// A declined state is spent too: no second answer to the same question.
	declined := askState(t, cs, "deleteProduct", p1)
	wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", p1, "decline", declined), notConfirmedDeclined)
	wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", p1, "accept", declined), notConfirmedReplayed)
	if n := svc.count(http.MethodDelete); n != 1 {
		t.Errorf("the service received %d DELETE(s); want the one confirmed", n)
	}
}

// TestConfirmationStateBoundToCaller: a state issued to one identity is
// refused for another over stateless HTTP, and a state issued on one
// in-memory connection is refused on another.
func TestConfirmationStateBoundToCaller(t *testing.T) {
	svc := newDemoCounter(t)
	ids := tokenTable{"alice-token": {User: "alice"}, "bob-token": {User: "bob"}}
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, &Options{HTTPOptions: HTTPOptions{Authenticator: ids}})
	srv := httptest.NewServer(s.httpHandler)
	t.Cleanup(srv.Close)
	alice := retryingByHand(t, s, srv.URL+Endpoint, "alice-token")
	bob := retryingByHand(t, s, srv.URL+Endpoint, "bob-token")
	p1 := map[string]any{"productId": "p-0001"}
	state := askState(t, alice, "deleteProduct", p1)
	wantNotConfirmed(t, retryWith(t, bob, "deleteProduct", p1, "accept", state), notConfirmedCaller)
	if n := svc.count(http.MethodDelete); n != 0 {
		t.Fatalf("bob's retry with alice's confirmation sent %d DELETE(s)", n)
	}
	if res := retryWith(t, alice, "deleteProduct", p1, "accept", state); res.IsError || svc.count(http.MethodDelete) != 1 {
		t.Fatalf("alice's retry: %s; %d DELETE(s) received, want 1", text(res), svc.count(http.MethodDelete))
	}

	one, other := retryingByHand(t, s, "", ""), retryingByHand(t, s, "", "")
	state = askState(t, one, "deleteProduct", p1)
	wantNotConfirmed(t, retryWith(t, other, "deleteProduct", p1, "accept", state), notConfirmedCaller)
	if n := svc.count(http.MethodDelete); n != 1 {
		t.Errorf("a retry on another connection sent a DELETE (%d in all)", n)
	}
}

// TestConfirmationStateExpires: a state answered after its lifetime is
// refused EXPIRED; one answered within it is sent.
func TestConfirmationStateExpires(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true, ConfirmWrites: openapitools.ConfirmAlways}, nil)
	cs := retryingByHand(t, s, "", "")
	var skew atomic.Int64
	s.confirms.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	p1 := map[string]any{"productId": "p-0001"}
	state := askState(t, cs, "deleteProduct", p1)
	skew.Store(int64(DefaultConfirmationTTL + time.Second))
	wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", p1, "accept", state), notConfirmedExpired)
	if n := svc.count(http.MethodDelete); n != 0 {
		t.Fatalf("an expired confirmation sent %d DELETE(s)", n)
	}
	state = askState(t, cs, "deleteProduct", p1)
	skew.Add(int64(DefaultConfirmationTTL - time.Second))
	if res := retryWith(t, cs, "deleteProduct", p1, "accept", state); res.IsError || svc.count(http.MethodDelete) != 1 {
		t.Errorf("a confirmation answered within its lifetime: %s; %d DELETE(s)", text(res), svc.count(http.MethodDelete))
	}
	// A state for one tool does not confirm another.
	body := map[string]any{"sku": "SKU-9", "name": "Nine", "price": map[string]any{"currency": "EUR", "amountMinor": 900}}
	create := askState(t, cs, "createProduct", map[string]any{"body": body})
	wantNotConfirmed(t, retryWith(t, cs, "deleteProduct", p1, "accept", create), notConfirmedRequest)
}

// FuzzConfirmationToken feeds arbitrary confirmation states, tools,
// arguments and callers to the check a 2026-07-28 retry passes through.
// Whatever arrives, the check must not panic, must give a reason and a
// message for every refusal, and must accept a state only when this
// server issued it for exactly that tool, those arguments and that
// caller, and only the first time. Then, for the fuzzed request, a state
// issued afresh must pass once, fail REPLAYED after, and fail for another
// request or caller, and every alteration of it must fail FORGED.
func FuzzConfirmationToken(f *testing.F) {
	// The fuzzing engine runs this function in each of its processes: the
	// secret, the clock and the seeds' ids are fixed, so a seed state is
	// one every process issued, and its mutations are tested against the
	// secret that signed it.
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	c := newConfirmations(logr.Discard())
	c.secret = sha256.Sum256([]byte("FuzzConfirmationToken"))
	c.now = func() time.Time { return at }
	callerTag := func(caller string) [tagLen]byte {
		return [tagLen]byte(c.mac("kubepact confirmation caller", []byte(caller)))
	}
	type issuedFor struct{ tool, arg, caller string }
	issued := map[string]issuedFor{}
	spent := map[string]bool{}
	for i, s := range []issuedFor{{"deleteProduct", "p-0001", "alice"}, {"createProduct", `{"sku":"SKU-9"}`, ""}, {"", "", "bob"}} {
		tok := c.mint(tokenID{byte(i + 1)}, c.requestTag(s.tool, map[string]any{"a": s.arg}), callerTag(s.caller))
		issued[tok] = s
		f.Add(tok, s.tool, s.arg, s.caller, uint(0))
		f.Add(tok, s.tool, s.arg, s.caller+"x", uint(3))
		f.Add(tok[:len(tok)-1]+"A", s.tool, s.arg, s.caller, uint(len(tok)-1))
	}
	for _, s := range []string{"", "kpc1.", "kpc1", "confirm-" + strings.Repeat("0", 64), "kpc1." + strings.Repeat("A", 119), "kpc1." + strings.Repeat("_", 119) + "=", "\x00", "kpc1.\u00e9"} {
		f.Add(s, "deleteProduct", "p-0001", "alice", uint(1))
	}
	f.Fuzz(func(t *testing.T, state, tool, arg, caller string, flip uint) {
		reqTag, who := c.requestTag(tool, map[string]any{"a": arg}), callerTag(caller)
		reason, msg := c.check(state, reqTag, who)
		if reason == "" {
			if s, ok := issued[state]; !ok || s != (issuedFor{tool, arg, caller}) || spent[state] {
				t.Fatalf("accepted the state %q for %q(%q) by %q: issued %v (for %+v), used before %v", state, tool, arg, caller, ok, s, spent[state])
			}
			spent[state] = true
		} else if msg == "" {
			t.Fatalf("refused %q with reason %s and no message", state, reason)
		}

		// A fresh server, so the fuzzed request's states do not fill the
		// store of the one above.
		fresh := newConfirmations(logr.Discard())
		reqTag, who = fresh.requestTag(tool, map[string]any{"a": arg}), [tagLen]byte(fresh.mac("kubepact confirmation caller", []byte(caller)))
		tok := fresh.issue(reqTag, who)
		other := fresh.requestTag(tool+"x", map[string]any{"a": arg})
		if r, _ := fresh.check(tok, other, who); r != notConfirmedRequest {
			t.Fatalf("a state for %q used for another tool: reason %q; want %s", tool, r, notConfirmedRequest)
		}
		if r, _ := fresh.check(tok, reqTag, [tagLen]byte(fresh.mac("kubepact confirmation caller", []byte(caller+"x")))); r != notConfirmedCaller {
			t.Fatalf("a state for %q used by another caller: reason %q; want %s", caller, r, notConfirmedCaller)
		}
		altered := []byte(tok)
		i := len(tokenPrefix) + int(flip%uint(len(tok)-len(tokenPrefix)))
		altered[i] = "AB"[b2i(altered[i] == 'A')]
		if r, _ := fresh.check(string(altered), reqTag, who); r != notConfirmedForged {
			t.Fatalf("the state altered at byte %d: reason %q; want %s", i, r, notConfirmedForged)
		}
		if r, m := fresh.check(tok, reqTag, who); r != "" {
			t.Fatalf("the state issued for the request: refused %s (%s)", r, m)
		}
		if r, _ := fresh.check(tok, reqTag, who); r != notConfirmedReplayed {
			t.Fatalf("the state used twice: reason %q; want %s", r, notConfirmedReplayed)
		}
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkConfirmationState is what a confirmation costs the server on
// the 2026-07-28 era, beside what the state cost before (the SHA-256 of
// the request, which anyone could compute): issuing a state, and
// checking and spending one.
func BenchmarkConfirmationState(b *testing.B) {
	c := newConfirmations(logr.Discard())
	args := map[string]any{"productId": "p-0001", "body": map[string]any{"sku": "SKU-9", "name": "Nine", "price": map[string]any{"currency": "EUR", "amountMinor": json.Number("900")}}}
	caller := [tagLen]byte(c.mac("kubepact confirmation caller", []byte("alice")))
	b.Run("sha256-of-the-request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = stateOfMain("createProduct", http.MethodPost, "http://127.0.0.1:8080/products")
		}
	})
	b.Run("issue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.issue(c.requestTag("createProduct", args), caller)
		}
	})
	b.Run("issue-and-check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// A fresh server now and then keeps the spent store from
			// filling up (that is OVERLOADED, not what is measured).
			if len(c.spent) >= maxSpentConfirmations-1 {
				b.StopTimer()
				c = newConfirmations(logr.Discard())
				caller = [tagLen]byte(c.mac("kubepact confirmation caller", []byte("alice")))
				b.StartTimer()
			}
			tag := c.requestTag("createProduct", args)
			if r, _ := c.check(c.issue(tag, caller), tag, caller); r != "" {
				b.Fatal(r)
			}
		}
	})
}

// TestSpentConfirmationsAreBounded: the store of used states is bounded;
// at the bound a retry is refused OVERLOADED (never by forgetting a used
// state, which would let it be replayed), and a state's id is dropped
// once the state has expired.
func TestSpentConfirmationsAreBounded(t *testing.T) {
	c := newConfirmations(logr.Discard())
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return at }
	tag, who := c.requestTag("deleteProduct", map[string]any{"productId": "p-0001"}), [tagLen]byte{}
	first := c.issue(tag, who)
	if r, _ := c.check(first, tag, who); r != "" {
		t.Fatalf("the first state: %s", r)
	}
	for i := 1; i < maxSpentConfirmations; i++ {
		at = at.Add(time.Millisecond)
		if r, _ := c.check(c.issue(tag, who), tag, who); r != "" {
			t.Fatalf("state %d: %s", i, r)
		}
	}
	if r, msg := c.check(c.issue(tag, who), tag, who); r != notConfirmedBusy || !strings.Contains(msg, "16384") {
		t.Fatalf("at the bound: %s (%s); want %s", r, msg, notConfirmedBusy)
	}
	if r, _ := c.check(first, tag, who); r != notConfirmedReplayed {
		t.Errorf("the first state again at the bound: %s; want %s", r, notConfirmedReplayed)
	}
	// Once the first states have expired their ids go, and a new one fits.
	at = at.Add(DefaultConfirmationTTL - time.Duration(maxSpentConfirmations-10)*time.Millisecond)
	fresh := c.issue(tag, who)
	if r, _ := c.check(fresh, tag, who); r != "" {
		t.Errorf("after the first states expired: %s", r)
	}
	if r, _ := c.check(first, tag, who); r != notConfirmedExpired {
		t.Errorf("the first state after its expiry: %s; want %s", r, notConfirmedExpired)
	}
	if n := len(c.spent); n >= maxSpentConfirmations {
		t.Errorf("%d used states kept; want the expired ones gone", n)
	}
}
