package main

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSignedStateRefusesForgeries plays the client that lies on a
// 2026-07-28 retry: it alters the request state it was given, or hands one
// tool's state to another. Each is a JSON-RPC error before the tool runs;
// the state as issued completes the call.
func TestSignedStateRefusesForgeries(t *testing.T) {
	s := newFixtureServer(t)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	// The client's own retry loop is off: this client answers by hand.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "forger", Version: "v0"}, &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}}).
		Connect(t.Context(), ct, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	first := func(tool string) string {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil || !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("%s: %v %+v, want input-required with a request state", tool, err, res)
		}
		return res.RequestState
	}
	state, other := first(mrtrTampered), first(mrtrState)
	ok := sdk.InputResponseMap{"confirm": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}
	for _, c := range []struct{ name, state string }{
		{"altered", state + "-TAMPERED"},
		{"another tool's", other},
		{"made up", "1.00"},
		{"round out of range", "99." + strings.Repeat("0", 64)},
	} {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: mrtrTampered, Arguments: map[string]any{}, InputResponses: ok, RequestState: c.state})
		if err == nil || !strings.Contains(err.Error(), "requestState failed its integrity check") {
			t.Errorf("%s state: %v %+v, want the integrity-check refusal", c.name, err, res)
		}
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: mrtrTampered, Arguments: map[string]any{}, InputResponses: ok, RequestState: state})
	if err != nil || res.NeedsInput() || res.IsError {
		t.Errorf("the state as issued: %v %+v, want a complete result", err, res)
	}
}
