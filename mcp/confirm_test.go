package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/capability"
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
			s := capabilityServer(t, "../examples/bundles/catalog", &capability.Options{BaseURL: svc.url, AllowWrites: true}, nil)
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
			if !strings.Contains(text(res), "--confirm-writes=never") || !strings.Contains(text(res), "Nothing was sent") {
				t.Errorf("the error %q does not say how to allow it and that nothing was sent", text(res))
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
	s := capabilityServer(t, "../examples/bundles/catalog", &capability.Options{BaseURL: svc.url, AllowWrites: true, ConfirmWrites: capability.ConfirmNever}, nil)
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
	s = capabilityServer(t, "../examples/bundles/catalog", &capability.Options{BaseURL: svc.url, AllowWrites: true, ConfirmWrites: capability.ConfirmAlways}, nil)
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
	s := capabilityServer(t, "../examples/bundles/catalog", &capability.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	srv := httptest.NewServer(s.Handler())
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
	s := capabilityServer(t, "../examples/bundles/catalog", &capability.Options{BaseURL: svc.url, AllowWrites: true}, nil)
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
	s := capabilityServer(t, "../examples/bundles/catalog", &capability.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	srv := httptest.NewServer(s.Handler())
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
	}
}
