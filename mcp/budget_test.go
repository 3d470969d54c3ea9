package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
)

// blocker is a service whose every request waits until its client gives
// up; it counts the requests that arrived and those released.
type blocker struct {
	arrived, released atomic.Int64
	url               string
}

func newBlocker(t testing.TB) *blocker {
	b := &blocker{}
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b.arrived.Add(1)
		<-r.Context().Done()
		b.released.Add(1)
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

// TestBudgetHostileCaller: a caller (an authenticated identity with no
// special standing) fills its share of the expensive calls (payload
// checks whose bundle is read from a registry that stalls); its next call
// is answered BUSY at once, with a retry hint, and nothing of it runs;
// another caller is still served, until the server-wide bound is
// reached too. When the hostile caller cancels its calls their work
// stops, down to the registry's requests, and their slots are free again.
func TestBudgetHostileCaller(t *testing.T) {
	stall := newBlocker(t)
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	explosiveBundle(t, filepath.Join(ws, "explosive"), 0)
	s := newTestServer(t, &Options{Transport: TransportHTTP, Workspace: ws, Registry: client, Families: []Family{FamilyPayload},
		HTTPOptions: HTTPOptions{Authenticator: tokenTable{"hostile-token": {User: "hostile"}, "legit-token": {User: "legit"}}},
		Budget:      BudgetOptions{MaxCalls: 3, MaxCallsPerCaller: 2, BundleMemory: 3 << 30, CallBundleMemory: 64 << 20}})
	url := serveHTTP(t, s)
	as := func(token, version string) *sdk.ClientSession {
		cs, err := httpClient(t.Context(), t, url, version, &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	hostile, legit := as("hostile-token", "2025-11-25"), as("legit-token", "")
	cheap := map[string]any{"service": "explosive", "configuration": "open", "payload": map[string]any{}}
	stalled := map[string]any{"service": "oci://" + strings.TrimPrefix(stall.url, "http://") + "/bundles/x:1", "configuration": "open", "payload": map[string]any{}}
	hold := func(cs *sdk.ClientSession, ctx context.Context) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_validate_payload", Arguments: stalled})
			done <- err
		}()
		return done
	}

	hctx, hcancel := context.WithCancel(t.Context())
	defer hcancel()
	held := []chan error{hold(hostile, hctx), hold(hostile, hctx)}
	waitFor(t, "the hostile caller's two calls to reach the registry", func() bool { return stall.arrived.Load() == 2 })

	e := toolErr(t, callTool(t, hostile, "pacto_validate_payload", cheap))
	if e["code"] != CodeBusy || e["retryAfterMs"] != float64(1000) || !strings.Contains(e["message"].(string), "--max-expensive-calls-per-caller") {
		t.Errorf("the hostile caller's third call: %v; want BUSY naming --max-expensive-calls-per-caller, retryAfterMs 1000", e)
	}
	if out := structured(t, callTool(t, legit, "pacto_validate_payload", cheap)); out["valid"] != true {
		t.Errorf("the legitimate caller beside a hostile one at its share: %v; want it served", out)
	}

	lctx, lcancel := context.WithCancel(t.Context())
	defer lcancel()
	legitHeld := hold(legit, lctx)
	waitFor(t, "the legitimate caller's call to reach the registry", func() bool { return stall.arrived.Load() == 3 })
	e = toolErr(t, callTool(t, legit, "pacto_validate_payload", cheap))
	if e["code"] != CodeBusy || !strings.Contains(e["message"].(string), "(3, --max-expensive-calls)") {
		t.Errorf("a call past the server-wide bound: %v; want BUSY naming --max-expensive-calls", e)
	}
	if n := stall.arrived.Load(); n != 3 {
		t.Errorf("%d requests reached the registry; a BUSY call must do nothing", n)
	}

	hcancel()
	for _, done := range held {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
	}
	waitFor(t, "the registry to see both cancelled requests end", func() bool { return stall.released.Load() == 2 })
	waitFor(t, "the budget to free the hostile caller's slots", func() bool {
		return !callTool(t, hostile, "pacto_validate_payload", cheap).IsError
	})
	lcancel()
	t.Logf("the legitimate caller's held call returned: %v", <-legitHeld)
}

// TestExpensiveCallTimeout: an expensive call past CallTimeout is stopped
// and answers CANCELLED naming the flag.
func TestExpensiveCallTimeout(t *testing.T) {
	ws := t.TempDir()
	explosiveBundle(t, filepath.Join(ws, "explosive"), 0)
	s := newTestServer(t, &Options{Workspace: ws, Families: []Family{FamilyPayload}, Budget: BudgetOptions{CallTimeout: 300 * time.Millisecond}})
	cs := connect(t.Context(), t, s)
	e := toolErr(t, callTool(t, cs, "pacto_validate_payload", map[string]any{"service": "explosive", "configuration": "open", "payload": nestedValue(40)}))
	if e["code"] != CodeCancelled || !strings.Contains(e["message"].(string), "did not finish within 300ms") || !strings.Contains(e["message"].(string), "--expensive-call-timeout") {
		t.Errorf("%v; want CANCELLED naming --expensive-call-timeout", e)
	}
}

// TestCallBundleMemory: a bundle one call may not hold is refused with
// INVALID_ARGUMENT naming the argument and --max-call-bundle-memory,
// whether reading it (pacto_impact) or projecting it (payload) is what
// would pass the bound; the read stops at the bound instead of after it.
func TestCallBundleMemory(t *testing.T) {
	ws := t.TempDir()
	explosiveBundle(t, filepath.Join(ws, "big"), 3<<20)      // read: 6 MiB
	explosiveBundle(t, filepath.Join(ws, "medium"), 100<<10) // read: 200 KiB; projected: 8 MiB
	explosiveBundle(t, filepath.Join(ws, "small"), 0)
	s := newTestServer(t, &Options{Workspace: ws, Families: []Family{FamilyPayload, FamilyFleet},
		Fleet:  FleetOptions{Enabled: true, Builder: fleetgraph.NewBuilder(nil)},
		Budget: BudgetOptions{MaxCalls: 2, MaxCallsPerCaller: 2, BundleMemory: 8 << 20, CallBundleMemory: 4 << 20}})
	cs := connect(t.Context(), t, s)
	e := toolErr(t, callTool(t, cs, "pacto_impact", map[string]any{"old_ref": "big", "new_ref": "small"}))
	if e["code"] != CodeInvalidArgument || e["field"] != "old_ref" || !strings.Contains(e["message"].(string), "--max-call-bundle-memory") {
		t.Errorf("impact of a bundle past the call's bound: %v", e)
	}
	e = toolErr(t, callTool(t, cs, "pacto_validate_payload", map[string]any{"service": "medium", "configuration": "open", "payload": map[string]any{}}))
	if e["code"] != CodeInvalidArgument || e["field"] != "service" || !strings.Contains(e["message"].(string), "projecting the interfaces of") {
		t.Errorf("a payload check whose projection passes the call's bound: %v", e)
	}
	if res := callTool(t, cs, "pacto_impact", map[string]any{"old_ref": "small", "new_ref": "small"}); res.IsError {
		t.Errorf("impact of two small bundles: %s", text(res))
	}
}

// TestSharedBundleMemory: calls holding bundle memory (here, reads from
// a registry that stalls, each holding what it may read) leave a caller
// at its share BUSY, while another caller is served, and the server at
// its bound BUSY for everyone.
func TestSharedBundleMemory(t *testing.T) {
	stall := newBlocker(t)
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	explosiveBundle(t, filepath.Join(ws, "small"), 0)
	s := newTestServer(t, &Options{Transport: TransportHTTP, Workspace: ws, Registry: client, Families: []Family{FamilyPayload},
		HTTPOptions: HTTPOptions{Authenticator: tokenTable{"a": {User: "a"}, "b": {User: "b"}, "c": {User: "c"}}},
		Budget:      BudgetOptions{MaxCalls: 4, MaxCallsPerCaller: 2, BundleMemory: 512 << 20}})
	url := serveHTTP(t, s)
	as := func(token string) *sdk.ClientSession {
		cs, err := httpClient(t.Context(), t, url, "", &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a, b, c := as("a"), as("b"), as("c")
	stalled := "oci://" + strings.TrimPrefix(stall.url, "http://") + "/bundles/x:1"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stallFor := func(cs *sdk.ClientSession, n int64) {
		go func() {
			_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_validate_payload", Arguments: map[string]any{"service": stalled, "configuration": "open", "payload": map[string]any{}}})
		}()
		waitFor(t, "the stalled read to reach the registry", func() bool { return stall.arrived.Load() >= n })
	}
	small := map[string]any{"service": "small", "configuration": "open", "payload": map[string]any{}}

	stallFor(a, 1) // a holds its share: one call may hold all of it
	e := toolErr(t, callTool(t, a, "pacto_validate_payload", small))
	if e["code"] != CodeBusy || !strings.Contains(e["message"].(string), "hold 256 MiB of bundle memory, as much as one caller may (256 MiB") {
		t.Errorf("a caller at its share of bundle memory: %v", e)
	}
	if res := callTool(t, c, "pacto_validate_payload", small); res.IsError {
		t.Errorf("another caller beside it: %s; want it served", text(res))
	}
	stallFor(b, 2) // the server's bound is reached
	e = toolErr(t, callTool(t, c, "pacto_validate_payload", small))
	if e["code"] != CodeBusy || !strings.Contains(e["message"].(string), "as much as the server allows (--max-bundle-memory 512 MiB)") {
		t.Errorf("a caller when the calls in progress hold all of it: %v", e)
	}
	cancel()
	waitFor(t, "the stalled reads to be released", func() bool { return stall.released.Load() >= stall.arrived.Load() })
	waitFor(t, "bundle memory to be free again", func() bool { return !callTool(t, c, "pacto_validate_payload", small).IsError })
}

// BenchmarkBudgetAdmission compares, in one run, an expensive call
// through the budget (admission, deadline, lease) with the same tool run
// as if it were not expensive.
func BenchmarkBudgetAdmission(b *testing.B) {
	ws := b.TempDir()
	explosiveBundle(b, filepath.Join(ws, "small"), 0)
	args := map[string]any{"service": "small", "configuration": "open", "payload": map[string]any{"a": map[string]any{}}}
	for _, budgeted := range []bool{true, false} {
		s := newTestServer(b, &Options{Workspace: ws, Families: []Family{FamilyPayload}})
		s.tools["pacto_validate_payload"].expensive = budgeted
		cs := connect(b.Context(), b, s)
		b.Run(map[bool]string{true: "budgeted", false: "unbudgeted"}[budgeted], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := callTool(b, cs, "pacto_validate_payload", args); res.IsError {
					b.Fatal(text(res))
				}
			}
		})
	}
}
