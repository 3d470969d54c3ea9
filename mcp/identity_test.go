package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/fleetgraph"
)

// tokenTable is a test Authenticator: a fixed table of tokens, and one
// token whose check fails the way an unreachable authority does. The
// Kubernetes one (TokenReview) is tested against a real API server in
// package controllers; this one exercises the seam.
type tokenTable map[string]Identity

const unreachableToken = "authority-down"

func (tt tokenTable) Authenticate(_ context.Context, token string) (Identity, error) {
	if token == unreachableToken {
		return Identity{}, errors.New("dial tcp 10.0.0.1:443: connect: connection refused (secret detail)")
	}
	id, ok := tt[token]
	if !ok {
		return Identity{}, fmt.Errorf("token %q unknown: %w", token, ErrUnauthenticated)
	}
	return id, nil
}

// namespaceTable is a test Scoper: each user sees fixed namespaces; one
// user's check fails. It counts its calls.
type namespaceTable struct {
	ns    map[string][]string
	calls atomic.Int64
}

func (n *namespaceTable) Visibility(_ context.Context, id Identity, _ *fleetgraph.Snapshot) (fleetgraph.Visibility, error) {
	n.calls.Add(1)
	if id.User == "flaky" {
		return fleetgraph.Visibility{}, errors.New("subjectaccessreviews: the server is currently unable to handle the request")
	}
	return fleetgraph.OnlyScopes(n.ns[id.User]...), nil
}

// scopedFleet is a fleet in namespaces team-a and team-b: orders and
// its dependency payments in team-a, billing in team-b (depending on
// orders), and orders also running in team-b.
func scopedFleet(t *testing.T) *fleetgraph.Builder {
	t.Helper()
	b := fleetgraph.NewBuilder(nil)
	revs := []*fleetgraph.Revision{
		{Name: "orders", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("1", 64), Scopes: []string{"team-a"}, Source: "kube", Owner: "team-a",
			Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: "payments", Ref: "payments:1.0.0", Required: true}}},
		{Name: "payments", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("2", 64), Scopes: []string{"team-a"}, Source: "kube", Owner: "team-a"},
		{Name: "billing", Version: "2.0.0", Digest: "sha256:" + strings.Repeat("3", 64), Scopes: []string{"team-b"}, Source: "kube", Owner: "team-b",
			Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: "orders", Ref: "orders:1.0.0", Required: true}}},
	}
	for _, r := range revs {
		if err := b.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range []*fleetgraph.Target{
		{Scope: "team-a", Kind: "Deployment", Name: "orders", Service: "orders", Digest: revs[0].Digest, Compliance: fleetgraph.StatusCompliant, Source: "kube"},
		{Scope: "team-b", Kind: "Deployment", Name: "orders-shadow", Service: "orders", Digest: revs[0].Digest, Compliance: fleetgraph.StatusNonCompliant, Source: "kube"},
		{Scope: "team-b", Kind: "Deployment", Name: "billing", Service: "billing", Digest: revs[2].Digest, Compliance: fleetgraph.StatusCompliant, Source: "kube"},
	} {
		if err := b.UpsertTarget(tg); err != nil {
			t.Fatal(err)
		}
	}
	b.SetSource(fleetgraph.SourceState{ID: "kube", Kind: "kubernetes", Status: fleetgraph.SourceAvailable})
	b.Flush()
	return b
}

func scopedServer(t *testing.T, logs *logSink) (url string, scoper *namespaceTable) {
	t.Helper()
	scoper = &namespaceTable{ns: map[string][]string{"alice": {"team-a"}, "bob": {"team-b"}, "admin": {"team-a", "team-b"}}}
	opts := &Options{
		Transport: TransportHTTP, Families: []Family{FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: scopedFleet(t)},
		HTTPOptions: HTTPOptions{Authenticator: tokenTable{"alice-token": {User: "alice", UID: "u-1"}, "bob-token": {User: "bob", UID: "u-2"},
			"admin-token": {User: "admin"}, "flaky-token": {User: "flaky"}, "nobody-token": {User: "nobody"}}},
		Scoper: scoper,
	}
	if logs != nil {
		opts.Logger = logs.logger()
	}
	return serveHTTP(t, newTestServer(t, opts)), scoper
}

// field is an array field of an answer; absent (omitted when empty) is nil.
func field(m map[string]any, key string) []any {
	l, _ := m[key].([]any)
	return l
}

func clientAs(t *testing.T, url, token, version string) *sdk.ClientSession {
	t.Helper()
	cs, err := httpClient(t.Context(), t, url, version, &http.Client{Transport: bearer{token, http.DefaultTransport}})
	if err != nil {
		t.Fatalf("connect as %s: %v", token, err)
	}
	return cs
}

// TestHTTPIdentityScopesTheFleet: two callers of one server and one
// snapshot get answers computed over their own namespaces: totals, misses
// and candidates, dependents and status never show the other's services.
func TestHTTPIdentityScopesTheFleet(t *testing.T) {
	logs := &logSink{}
	url, _ := scopedServer(t, logs)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			alice, bob, admin := clientAs(t, url, "alice-token", era), clientAs(t, url, "bob-token", era), clientAs(t, url, "admin-token", era)
			total := func(cs *sdk.ClientSession) (float64, []string) {
				res := fleetCall(t, cs, "pacto_fleet_search", map[string]any{})
				out := structured(t, res)
				var keys []string
				for _, sv := range out["services"].([]any) {
					keys = append(keys, sv.(map[string]any)["key"].(string))
				}
				return out["total"].(float64), keys
			}
			if n, keys := total(alice); n != 2 || strings.Join(keys, ",") != "orders,payments" {
				t.Errorf("alice sees %v services %v, want orders and payments", n, keys)
			}
			if n, keys := total(bob); n != 2 || strings.Join(keys, ",") != "billing,orders" {
				t.Errorf("bob sees %v services %v, want billing and orders (running in team-b)", n, keys)
			}
			if n, _ := total(admin); n != 3 {
				t.Errorf("admin sees %v services, want 3", n)
			}
			// A hidden service is a miss like any absent one, and no
			// candidate names it.
			for _, name := range []string{"billing", "billin"} {
				res := structured(t, fleetCall(t, alice, "pacto_fleet_get", map[string]any{"service": name}))
				if res["found"] != false || strings.Contains(fmt.Sprint(res["candidates"]), "billing") || strings.Contains(fmt.Sprint(res), "team-b") {
					t.Errorf("alice get %s: %v", name, res)
				}
			}
			// orders seen by alice: its team-a target only; billing (team-b)
			// is not among its dependents.
			res := structured(t, fleetCall(t, alice, "pacto_fleet_get", map[string]any{"service": "orders"}))
			if got := field(res, "dependents"); len(got) != 0 {
				t.Errorf("alice sees dependents of orders %s, want none", got)
			}
			if tg := field(res, "targets"); len(tg) != 1 || res["service"].(map[string]any)["status"] != "Compliant" {
				t.Errorf("alice sees orders with targets %v and status %v", tg, res["service"].(map[string]any)["status"])
			}
			// orders seen by bob: running in team-b, its contract hidden;
			// its dependency payments is not reachable.
			res = structured(t, fleetCall(t, bob, "pacto_fleet_get", map[string]any{"service": "orders"}))
			if len(field(res, "revisions")) != 0 || res["service"].(map[string]any)["status"] != "NonCompliant" {
				t.Errorf("bob sees orders as %v", res)
			}
			g := structured(t, fleetCall(t, bob, "pacto_fleet_graph", map[string]any{"service": "billing", "transitive": true}))
			if strings.Contains(fmt.Sprint(g["nodes"]), "payments") || strings.Contains(fmt.Sprint(g["edges"]), "payments") {
				t.Errorf("bob's graph from billing reaches payments: %v", g)
			}
			st := structured(t, fleetCall(t, alice, "pacto_fleet_status", map[string]any{}))
			if items := fmt.Sprint(st["items"]); strings.Contains(items, "orders-shadow") || strings.Contains(items, "billing") || st["total"].(float64) != 2 {
				t.Errorf("alice's status shows team-b: %v", st)
			}
			st = structured(t, fleetCall(t, bob, "pacto_fleet_status", map[string]any{"non_compliant": true}))
			if items := fmt.Sprint(st["items"]); !strings.Contains(items, "orders-shadow") || st["total"].(float64) != 1 {
				t.Errorf("bob's status misses his non-compliant target: %v", st)
			}
		})
	}
	if lines := logs.matching(`"msg"="Tool call"`); len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), `"user"="alice" "uid"="u-1"`) {
		t.Errorf("audit lines do not name the caller:\n%s", strings.Join(lines, "\n"))
	}
}

// TestHTTPIdentityCursorsAndSessions: a cursor issued to one caller is
// refused for another, and a session answers only the identity that
// opened it.
func TestHTTPIdentityCursorsAndSessions(t *testing.T) {
	url, _ := scopedServer(t, nil)
	admin := clientAs(t, url, "admin-token", "2026-07-28")
	page := structured(t, fleetCall(t, admin, "pacto_fleet_search", map[string]any{"limit": 1}))
	cursor, _ := page["nextCursor"].(string)
	if cursor == "" {
		t.Fatalf("no cursor: %v", page)
	}
	alice := clientAs(t, url, "alice-token", "2026-07-28")
	res := fleetCall(t, alice, "pacto_fleet_search", map[string]any{"limit": 1, "cursor": cursor})
	if !res.IsError || !strings.Contains(text(res), "CURSOR_INVALID") {
		t.Errorf("alice replaying admin's cursor: %s", text(res))
	}
	if res := fleetCall(t, admin, "pacto_fleet_search", map[string]any{"limit": 1, "cursor": cursor}); res.IsError {
		t.Errorf("admin's own cursor: %s", text(res))
	}

	// Bob sends a request in alice's session.
	aliceSession := clientAs(t, url, "alice-token", "2025-11-25")
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pacto_fleet_search","arguments":{}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer bob-token")
	req.Header.Set("Mcp-Session-Id", aliceSession.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || strings.Contains(string(got), "orders") {
		t.Errorf("bob in alice's session: %d %s", resp.StatusCode, got)
	}
}

// TestHTTPIdentityRefusals: no token, an invalid one and an unreachable
// authority are refused before MCP with the right status and no detail;
// an undecidable visibility and a caller who sees nothing show nothing.
func TestHTTPIdentityRefusals(t *testing.T) {
	logs := &logSink{}
	url, _ := scopedServer(t, logs)
	for _, tc := range []struct {
		name, auth string
		status     int
		challenge  string
	}{
		{"no token", "", http.StatusUnauthorized, `Bearer realm="kubepact"`},
		{"not bearer", "Basic YWxpY2U6eA==", http.StatusUnauthorized, `Bearer realm="kubepact"`},
		{"two tokens", "Bearer alice-token bob-token", http.StatusUnauthorized, `Bearer realm="kubepact"`},
		{"invalid token", "Bearer forged", http.StatusUnauthorized, `Bearer realm="kubepact", error="invalid_token"`},
		{"authority down", "Bearer " + unreachableToken, http.StatusServiceUnavailable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.auth != "" {
				hdr["Authorization"] = tc.auth
			}
			resp := rawRequest(t, url, hdr)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge {
				t.Errorf("status %d, WWW-Authenticate %q; want %d, %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.status, tc.challenge)
			}
			if strings.Contains(string(body), "forged") || strings.Contains(string(body), "10.0.0.1") || strings.Contains(string(body), "secret") {
				t.Errorf("the refusal leaks detail: %s", body)
			}
		})
	}
	if len(logs.matching("connection refused")) == 0 {
		t.Error("the unreachable authority's error is not in the server log")
	}

	flaky := clientAs(t, url, "flaky-token", "2026-07-28")
	res := fleetCall(t, flaky, "pacto_fleet_search", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "UNAVAILABLE") || strings.Contains(text(res), "orders") {
		t.Errorf("undecidable visibility: %s", text(res))
	}
	nobody := clientAs(t, url, "nobody-token", "2026-07-28")
	out := structured(t, fleetCall(t, nobody, "pacto_fleet_search", map[string]any{}))
	// Nothing to see is said, with the remedy: an empty answer here is
	// no evidence of an empty fleet.
	meta := out["meta"].(map[string]any)
	lims, _ := meta["limitations"].([]any)
	var last map[string]any
	if len(lims) > 0 {
		last, _ = lims[len(lims)-1].(map[string]any)
	}
	if out["total"].(float64) != 0 || meta["completeness"] != fleetgraph.CompletenessPartial || last["code"] != fleetgraph.LimitNoVisibleScope ||
		!strings.Contains(fmt.Sprint(last["message"]), "none of the namespaces") || !strings.Contains(fmt.Sprint(last["message"]), "--clusterrole=kubepact-fleet-reader") {
		t.Errorf("a caller with no namespace: %v; want partial, ending with %s naming the remedy", out, fleetgraph.LimitNoVisibleScope)
	}
}

// TestScoperNeedsACaller: calls without an identity (stdio, in-memory) on
// a scoped server are refused, not answered with the whole fleet; the
// options refuse a Scoper without an Authenticator and two authenticators.
func TestScoperNeedsACaller(t *testing.T) {
	s := newTestServer(t, &Options{Families: []Family{FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: scopedFleet(t)},
		HTTPOptions: HTTPOptions{Authenticator: tokenTable{}}, Scoper: &namespaceTable{}})
	cs := connect(t.Context(), t, s)
	res := fleetCall(t, cs, "pacto_fleet_search", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "UNAVAILABLE") {
		t.Errorf("a call without identity: %s", text(res))
	}
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{Scoper: &namespaceTable{}}, "Scoper"},
		{Options{HTTPOptions: HTTPOptions{Authenticator: tokenTable{}, AuthTokenFile: "/dev/null"}}, "AuthTokenFile"},
	} {
		_, err := NewServer(t.Context(), &tc.opts)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("NewServer(%+v): %v, want an OptionError on %s", tc.opts, err, tc.field)
		}
	}
	// Beyond loopback, an Authenticator is authentication enough.
	if s, err := NewServer(t.Context(), &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{Listen: "0.0.0.0", Authenticator: tokenTable{}}, Workspace: t.TempDir()}); err != nil {
		t.Errorf("listening beyond loopback with an Authenticator: %v", err)
	} else {
		_ = s.Close()
	}
}
