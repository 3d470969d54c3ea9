package kubeauth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/kubeauth"
)

// countingConfig is the operator's rest.Config with every request it
// sends counted, at the transport.
func countingConfig(n *atomic.Int64) *rest.Config {
	cfg := rest.CopyConfig(suite.OperatorConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// serviceAccountToken creates a ServiceAccount and returns a token for it
// from the TokenRequest API.
func serviceAccountToken(t testing.TB, ns, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	suite.Create(t, sa)
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	if err := suite.Admin.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, name, err)
	}
	if tr.Status.Token == "" {
		t.Fatalf("TokenRequest for %s/%s returned no token", ns, name)
	}
	return tr.Status.Token
}

// grantList lets a ServiceAccount list ServiceContracts in ns (a Role and
// RoleBinding), or in every namespace when ns is "" (a ClusterRole and
// ClusterRoleBinding). It returns the binding, for revoking.
func grantList(t testing.TB, ns, saNS, sa string) metav1.Object {
	t.Helper()
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"get", "list", "watch"}}}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: saNS, Name: sa}}
	if ns == "" {
		name := "kubepact-identity-test-" + saNS + "-" + sa
		suite.Create(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules})
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}}
		suite.Create(t, b)
		return b
	}
	suite.Create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-contracts-" + sa}, Rules: rules})
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-contracts-" + sa}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-contracts-" + sa}}
	suite.Create(t, b)
	return b
}

// identityFleet is the example bundles (no namespace: a local source) and
// a target-state file placing catalog and orders in nsA, payments in nsB.
func identityFleet(t *testing.T, nsA, nsB string) *fleetgraph.Builder {
	t.Helper()
	targets := fmt.Sprintf(`schemaVersion: pacto.dev/fleet-targets/v1
targets:
  - {scope: %[1]s, kind: Deployment, name: catalog, service: catalog, requestedRef: "catalog:1.4.0", compliance: Compliant}
  - {scope: %[1]s, kind: Deployment, name: orders, service: orders, requestedRef: "orders:2.3.1", compliance: NonCompliant}
  - {scope: %[2]s, kind: Deployment, name: payments, service: payments, requestedRef: "payments:3.0.2", compliance: Compliant}
`, nsA, nsB)
	path := filepath.Join(t.TempDir(), "targets.yaml")
	if err := os.WriteFile(path, []byte(targets), 0o600); err != nil {
		t.Fatal(err)
	}
	b := fleetgraph.NewBuilder(nil)
	snap := source.NewFeed(b, []source.Source{
		&source.LocalSource{Dir: "../../examples/bundles"},
		&source.TargetStateSource{Path: path},
	}).Collect(t.Context(), nil)
	if sv, _, tg := snap.Counts(); sv != 3 || tg != 3 {
		t.Fatalf("fleet: %d services, %d targets; want 3 and 3 (%v)", sv, tg, snap.Meta().Limitations)
	}
	return b
}

func serveMCP(t testing.TB, opts *mcp.Options) string {
	t.Helper()
	srv, err := mcp.NewServer(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + mcp.Endpoint
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpClient(t testing.TB, url, token, era string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "identity-test", Version: "v0"}, nil).Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t testing.TB, cs *sdk.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	m, ok := res.StructuredContent.(map[string]any)
	if !ok || res.IsError {
		t.Fatalf("%s: error or no structured content: %+v", tool, res.Content)
	}
	return m
}

// arr is an array field of an answer; absent (omitted when empty) is nil.
func arr(m map[string]any, key string) []any {
	a, _ := m[key].([]any)
	return a
}

func serviceKeys(m map[string]any) string {
	var keys []string
	for _, sv := range m["services"].([]any) {
		keys = append(keys, sv.(map[string]any)["key"].(string))
	}
	return strings.Join(keys, ",")
}

// TestKubeIdentityScopesMCP: ServiceAccounts with RBAC in different
// namespaces, authenticated with their own TokenRequest tokens by
// TokenReview and scoped by SubjectAccessReview (sent as the operator's
// ServiceAccount, with the generated ClusterRole), get different answers
// from the same snapshot over HTTP; misses reveal nothing hidden; a bad
// token gets 401; and once the caches are warm, 1,000 queries make no
// API-server request at all.
func TestKubeIdentityScopesMCP(t *testing.T) {
	suite.NeedKCM(t) // the acceptance's control plane: API server, etcd and kube-controller-manager
	nsA, nsB := suite.NewNamespace(t), suite.NewNamespace(t)
	aliceTok, bobTok := serviceAccountToken(t, nsA, "alice"), serviceAccountToken(t, nsB, "bob")
	carolTok, daveTok := serviceAccountToken(t, nsA, "carol"), serviceAccountToken(t, nsB, "dave")
	grantList(t, nsA, nsA, "alice")
	bobBinding := grantList(t, nsB, nsB, "bob")
	grantList(t, "", nsA, "carol") // every namespace
	// dave may list nothing.

	var requests atomic.Int64
	clock := &testClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	ident, err := kubeauth.NewKubeIdentity(countingConfig(&requests), &kubeauth.IdentityOptions{
		TokenTTL: 10 * time.Minute, NegativeTokenTTL: time.Second, AccessTTL: 10 * time.Minute, Clock: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	url := serveMCP(t, &mcp.Options{
		Transport: mcp.TransportHTTP, Workspace: t.TempDir(), Families: []mcp.Family{mcp.FamilyFleet},
		Fleet: mcp.FleetOptions{Enabled: true, Builder: identityFleet(t, nsA, nsB)},
		// 1,000 queries below come from four identities as fast as the
		// machine answers; the default per-caller limits would refuse
		// some on a quiet one. Limits are tested in package mcp.
		HTTPOptions: mcp.HTTPOptions{Authenticator: ident, RateLimit: mcp.RateLimitOptions{RequestRate: -1, ToolCallRate: -1}},
		Scoper:      ident,
	})

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		alice, bob, carol, dave := mcpClient(t, url, aliceTok, era), mcpClient(t, url, bobTok, era), mcpClient(t, url, carolTok, era), mcpClient(t, url, daveTok, era)
		for _, tc := range []struct {
			who   string
			cs    *sdk.ClientSession
			total float64
			keys  string
		}{
			{"alice", alice, 2, "catalog,orders"},
			{"bob", bob, 1, "payments"},
			{"carol", carol, 3, "catalog,orders,payments"},
			{"dave", dave, 0, ""},
		} {
			got := call(t, tc.cs, "pacto_fleet_search", map[string]any{})
			if got["total"] != tc.total || serviceKeys(got) != tc.keys {
				t.Errorf("%s (%s): total %v, services %q; want %v, %q", tc.who, era, got["total"], serviceKeys(got), tc.total, tc.keys)
			}
			// Only dave, who may see no namespace, is told that his
			// empty answer is no evidence of an empty fleet.
			meta, _ := got["meta"].(map[string]any)
			told := strings.Contains(fmt.Sprint(meta["limitations"]), "NO_VISIBLE_SCOPE")
			if want := tc.who == "dave"; told != want || want && meta["completeness"] != "partial" {
				t.Errorf("%s (%s): told it sees no namespace: %v, want %v; meta %v", tc.who, era, told, want, meta)
			}
		}
		// Misses: payments is hidden from alice exactly as an absent
		// service is, and no candidate names it.
		for _, q := range []string{"payments", "paymnts", "no-such-service"} {
			got := call(t, alice, "pacto_fleet_get", map[string]any{"service": q})
			if got["found"] != false || strings.Contains(fmt.Sprint(got), "payments") && q != "payments" || strings.Contains(fmt.Sprint(got["candidates"]), "payments") || strings.Contains(fmt.Sprint(got), nsB) {
				t.Errorf("alice get %q (%s): %v", q, era, got)
			}
		}
		// Alice's view of orders: her target only, and the contract (from
		// a local source outside any namespace) not shown.
		got := call(t, alice, "pacto_fleet_get", map[string]any{"service": "orders"})
		if got["found"] != true || len(arr(got, "targets")) != 1 || len(arr(got, "revisions")) != 0 {
			t.Errorf("alice get orders (%s): %v", era, got)
		}
		got = call(t, carol, "pacto_fleet_get", map[string]any{"service": "orders"})
		if len(arr(got, "revisions")) != 1 {
			t.Errorf("carol (cluster-wide) sees orders without its revision: %v", got)
		}
	}

	// A token the API server does not accept is refused before MCP.
	for _, tok := range []string{"not-a-token", aliceTok + "x"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) || strings.Contains(string(body), "tools") {
			t.Errorf("invalid token: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}

	// Warm: every identity has queried. Now 1,000 queries, over both eras
	// and every tool kind, send nothing to the API server.
	sessions := map[string]*sdk.ClientSession{}
	for who, tok := range map[string]string{"alice": aliceTok, "bob": bobTok, "carol": carolTok, "dave": daveTok} {
		sessions[who+"/session"] = mcpClient(t, url, tok, "2025-11-25")
		sessions[who+"/stateless"] = mcpClient(t, url, tok, "2026-07-28")
		call(t, sessions[who+"/session"], "pacto_fleet_search", map[string]any{})
	}
	before := requests.Load()
	names := []string{"alice/session", "alice/stateless", "bob/session", "bob/stateless", "carol/session", "carol/stateless", "dave/session", "dave/stateless"}
	queries := []struct {
		tool string
		args map[string]any
	}{
		{"pacto_fleet_search", map[string]any{}},
		{"pacto_fleet_get", map[string]any{"service": "orders"}},
		{"pacto_fleet_status", map[string]any{}},
		{"pacto_fleet_graph", map[string]any{"service": "orders", "transitive": true}},
		{"pacto_fleet_explain", map[string]any{"subject": "payments"}},
	}
	for i := range 1000 {
		q := queries[i%len(queries)]
		res, err := sessions[names[i%len(names)]].CallTool(t.Context(), &sdk.CallToolParams{Name: q.tool, Arguments: q.args})
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		if res.IsError {
			t.Fatalf("query %d (%s as %s): %+v", i, q.tool, names[i%len(names)], res.Content)
		}
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("1,000 warm queries sent %d requests to the API server, want 0", n)
	}

	// A revoked binding shows once the access decisions expire.
	if err := suite.Admin.Delete(t.Context(), bobBinding.(*rbacv1.RoleBinding)); err != nil {
		t.Fatal(err)
	}
	bob := sessions["bob/stateless"]
	if got := call(t, bob, "pacto_fleet_search", map[string]any{}); got["total"] != float64(1) {
		t.Errorf("bob within the access TTL: total %v, want the cached 1", got["total"])
	}
	clock.Add(11 * time.Minute)
	if got := call(t, bob, "pacto_fleet_search", map[string]any{}); got["total"] != float64(0) {
		t.Errorf("bob after his binding was deleted and the TTL passed: total %v, want 0", got["total"])
	}
}

// TestKubeIdentityCaches: TokenReview results are cached by token,
// refusals for the shorter negative TTL; the cache is bounded.
func TestKubeIdentityCaches(t *testing.T) {
	ns := suite.NewNamespace(t)
	tok := serviceAccountToken(t, ns, "cached")
	var requests atomic.Int64
	clock := &testClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	ident, err := kubeauth.NewKubeIdentity(countingConfig(&requests), &kubeauth.IdentityOptions{
		TokenTTL: time.Minute, NegativeTokenTTL: 5 * time.Second, MaxTokens: 2, Clock: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	reviews := func(do func()) int64 {
		before := requests.Load()
		do()
		return requests.Load() - before
	}
	authn := func(token string, wantOK bool) func() {
		return func() {
			id, err := ident.Authenticate(t.Context(), token)
			if ok := err == nil; ok != wantOK {
				t.Fatalf("Authenticate: %v, %v; want ok=%v", id, err, wantOK)
			}
			if wantOK && id.User != "system:serviceaccount:"+ns+":cached" {
				t.Errorf("identity %+v", id)
			}
		}
	}
	if n := reviews(authn(tok, true)); n != 1 {
		t.Errorf("first check: %d requests, want 1 TokenReview", n)
	}
	if n := reviews(authn(tok, true)); n != 0 {
		t.Errorf("second check: %d requests, want the cached result", n)
	}
	if n := reviews(func() { authn("bogus", false)(); authn("bogus", false)() }); n != 1 {
		t.Errorf("a refused token twice: %d requests, want 1", n)
	}
	clock.Add(6 * time.Second) // past the negative TTL, within the positive one
	if n := reviews(func() { authn("bogus", false)(); authn(tok, true)() }); n != 1 {
		t.Errorf("after 6s: %d requests, want 1 (the refusal asked again, the acceptance cached)", n)
	}
	// Fifty callers presenting a new token at once cause one TokenReview.
	tok2 := serviceAccountToken(t, ns, "crowd")
	if n := reviews(func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				if _, err := ident.Authenticate(t.Context(), tok2); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}); n != 1 {
		t.Errorf("50 concurrent checks of one new token: %d requests, want 1", n)
	}
	// Two more tokens push the valid one out of a cache of two.
	authn("bogus-2", false)()
	authn("bogus-3", false)()
	if n := reviews(authn(tok, true)); n != 1 {
		t.Errorf("after eviction: %d requests, want 1", n)
	}
}

// TestKubeIdentitySharedRevision: one digest published by ServiceContracts
// in two namespaces is one revision scoped to both; over HTTP, with
// TokenReview and SubjectAccessReview, a reader of either namespace sees
// it naming only its own namespace, a reader of a third sees nothing and
// no namespace name; when the publisher in the first namespace goes, its
// reader loses the revision and the other keeps it.
func TestKubeIdentitySharedRevision(t *testing.T) {
	suite.NeedKCM(t)
	nsA, nsB, nsC := suite.NewNamespace(t), suite.NewNamespace(t), suite.NewNamespace(t)
	aliceTok, bobTok, erinTok := serviceAccountToken(t, nsA, "alice"), serviceAccountToken(t, nsB, "bob"), serviceAccountToken(t, nsC, "erin")
	grantList(t, nsA, nsA, "alice")
	grantList(t, nsB, nsB, "bob")
	grantList(t, nsC, nsC, "erin")

	b := fleetgraph.NewBuilder(nil)
	rev := &fleetgraph.Revision{Domain: "registry.example.com/team", Name: "pay", Version: "1.0.0",
		Digest: "sha256:" + strings.Repeat("ab", 32), Source: "kubernetes", Scopes: []string{nsB, nsA}}
	if err := b.UpsertRevision(rev); err != nil {
		t.Fatal(err)
	}
	b.SetSource(fleetgraph.SourceState{ID: "kubernetes", Kind: "kubernetes", Status: fleetgraph.SourceAvailable, LastSuccessfulSync: time.Now()})
	b.Flush()
	var requests atomic.Int64
	ident, err := kubeauth.NewKubeIdentity(countingConfig(&requests), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := serveMCP(t, &mcp.Options{
		Transport: mcp.TransportHTTP, Workspace: t.TempDir(), Families: []mcp.Family{mcp.FamilyFleet},
		Fleet: mcp.FleetOptions{Enabled: true, Builder: b}, HTTPOptions: mcp.HTTPOptions{Authenticator: ident}, Scoper: ident,
	})
	// Stateless calls answer from the current snapshot.
	alice, bob, erin := mcpClient(t, url, aliceTok, "2026-07-28"), mcpClient(t, url, bobTok, "2026-07-28"), mcpClient(t, url, erinTok, "2026-07-28")
	scopes := func(who string, cs *sdk.ClientSession) []string {
		t.Helper()
		got := call(t, cs, "pacto_fleet_get", map[string]any{"service": "pay"})
		if got["found"] != true {
			if s := fmt.Sprint(got); strings.Contains(s, nsA) || strings.Contains(s, nsB) {
				t.Errorf("%s's miss names a namespace it cannot see: %s", who, s)
			}
			return nil
		}
		revs := arr(got, "revisions")
		if len(revs) != 1 {
			t.Fatalf("%s: %d revisions, want 1: %v", who, len(revs), got)
		}
		var out []string
		for _, s := range arr(revs[0].(map[string]any), "scopes") {
			out = append(out, s.(string))
		}
		return out
	}
	check := func(step, who string, cs *sdk.ClientSession, want ...string) {
		t.Helper()
		if got := scopes(who, cs); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: %s sees the revision with scopes %v, want %v", step, who, got, want)
		}
	}
	check("published in both", "alice", alice, nsA)
	check("published in both", "bob", bob, nsB)
	check("published in both", "erin", erin)

	gone := *rev
	gone.Scopes = []string{nsB}
	if err := b.UpsertRevision(&gone); err != nil {
		t.Fatal(err)
	}
	b.Flush()
	check("its publisher in alice's namespace gone", "alice", alice)
	check("its publisher in alice's namespace gone", "bob", bob, nsB)
}

// TestKubeIdentityBoundsTokenReviews is a caller on the Pod network (no
// token of its own needed) presenting made-up bearer tokens to /mcp as
// fast as it can: each new one is a TokenReview the operator sends as
// itself, in the API server's flow of its reconciling and leader
// election. TokenReviews of tokens not accepted lately are bounded
// (rate and burst); past the bound the request is answered 503 with a
// retry hint, without asking; a token accepted lately is always asked
// about, so its owner is not locked out by the flood. Today every made-up
// token is a TokenReview.
func TestKubeIdentityBoundsTokenReviews(t *testing.T) {
	ns := suite.NewNamespace(t)
	tok := serviceAccountToken(t, ns, "known")
	var requests atomic.Int64
	clock := &testClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	ident, err := kubeauth.NewKubeIdentity(countingConfig(&requests), &kubeauth.IdentityOptions{
		TokenTTL: 10 * time.Second, TokenReviewRate: 1, TokenReviewBurst: 5, Clock: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ident.Authenticate(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	flood := func(round int) (reviewed int64, busy int) {
		before := requests.Load()
		for i := range 50 {
			_, err := ident.Authenticate(t.Context(), fmt.Sprintf("made-up-%d-%d", round, i))
			switch {
			case errors.Is(err, mcp.ErrAuthenticatorBusy):
				busy++
			case !errors.Is(err, mcp.ErrUnauthenticated):
				t.Fatalf("a made-up token: %v", err)
			}
		}
		return requests.Load() - before, busy
	}
	if n, busy := flood(1); n != 4 || busy != 46 {
		t.Errorf("50 made-up tokens after one accepted: %d TokenReviews, %d answered busy; want 4 (the burst left) and 46", n, busy)
	}
	// Past the accepted token's cache and with the bucket drained again
	// (11 s refill 11 reviews), its owner is still asked about.
	clock.Add(11 * time.Second)
	if n, _ := flood(2); n != 5 {
		t.Errorf("50 more made-up tokens 11 s later: %d TokenReviews, want 5 (the burst)", n)
	}
	before := requests.Load()
	if id, err := ident.Authenticate(t.Context(), tok); err != nil || id.User != "system:serviceaccount:"+ns+":known" {
		t.Errorf("the known token during the flood: %+v, %v; want it accepted", id, err)
	}
	if n := requests.Load() - before; n != 1 {
		t.Errorf("the known token during the flood: %d TokenReviews, want 1", n)
	}

	// Over HTTP: a made-up token past the bound is a 503 with a retry hint.
	url := serveMCP(t, &mcp.Options{Transport: mcp.TransportHTTP, Families: []mcp.Family{mcp.FamilyFleet},
		Fleet: mcp.FleetOptions{Builder: fleetgraph.NewBuilder(nil)}, HTTPOptions: mcp.HTTPOptions{Authenticator: ident}, Scoper: ident, Workspace: t.TempDir()})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer made-up-http")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "retry") {
		t.Errorf("a made-up token past the bound over HTTP: %d %q (Retry-After %q), want 503 with a retry hint", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}
