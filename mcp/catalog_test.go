package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/catalog"
	"github.com/kubepact/kubepact/test/testregistry"
)

// catalogRegistry is a real registry on loopback and a client for it
// that does not retry, so an unreachable root fails at once.
func catalogRegistry(t *testing.T) (*testregistry.Registry, *oci.Client) {
	t.Helper()
	reg := testregistry.New(t, nil)
	c, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, NoRetry: true, AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return reg, c
}

// pushContract pushes a contract of service name at version, depending on
// deps (name → ref), to host/acme/name:tag and returns its digest.
func pushContract(t *testing.T, c *oci.Client, host, name, tag, version string, deps map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	doc := fmt.Sprintf("pactoVersion: \"2.0\"\nservice:\n  name: %s\n  version: %s\n", name, version)
	if len(deps) > 0 {
		doc += "dependencies:\n"
		for _, n := range slices.Sorted(keysOf(deps)) {
			doc += fmt.Sprintf("  - name: %s\n    ref: %q\n    required: true\n    compatibility: \"^1.0.0\"\n", n, deps[n])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := oci.ParseReference(host + "/acme/" + name + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Push(t.Context(), ref, img)
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// readJSON reads a resource through the client and decodes its JSON.
func readJSON(t *testing.T, cs *sdk.ClientSession, uri string, into any) {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %s: %+v", uri, res.Contents)
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), into); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
}

// resolvedCatalog reads pacto://catalog until the server's first
// resolution has ended (no RESOLVING limitation) and returns it. The
// deadline only keeps a hung resolution from hanging the test.
func resolvedCatalog(t *testing.T, cs *sdk.ClientSession) catalog.Summary {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var sum catalog.Summary
		readJSON(t, cs, CatalogURI, &sum)
		if !slices.ContainsFunc(sum.Meta.Limitations, func(l catalog.Limitation) bool { return l.Code == catalog.LimitResolving }) {
			return sum
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalog is still resolving: %+v", sum.Meta)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func lookup(t *testing.T, cs *sdk.ClientSession, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_catalog_revision", Arguments: args})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	return res, structured(t, res)
}

// TestCatalogFamilyOverRegistry serves a catalog of a real registry's
// bundles to a real client: a root with its dependency, a root beyond a
// bound, an unreachable root; then moves a tag and refreshes.
func TestCatalogFamilyOverRegistry(t *testing.T) {
	reg, c := catalogRegistry(t)
	base := "oci://" + reg.Host + "/acme/"
	pushContract(t, c, reg.Host, "deep", "1.0.0", "1.0.0", nil)
	depDigest := pushContract(t, c, reg.Host, "payments", "1.0.0", "1.0.0", map[string]string{"deep": base + "deep:1.0.0"})
	first := pushContract(t, c, reg.Host, "orders", "stable", "1.0.0", map[string]string{"payments": base + "payments:1.0.0"})

	roots := []string{base + "orders:stable", "oci://127.0.0.1:1/acme/gone:1.0.0"}
	live, err := catalog.NewLive(t.Context(), &catalog.Options{Roots: roots, Client: c, Bounds: catalog.Bounds{MaxDepth: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyCatalog}, Catalog: CatalogOptions{Live: live}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t.Context(), t, s)

	var sum catalog.Summary
	readJSON(t, cs, CatalogURI, &sum)
	if sum.Meta.SchemaVersion != catalog.SchemaVersion || sum.Meta.Completeness != catalog.CompletenessPartial || len(sum.Roots) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if r := sum.Roots[1]; r.Resolved || r.Reason.Code != catalog.ReasonUnavailable || strings.Contains(r.Reason.Message, "127.0.0.1") {
		t.Errorf("unreachable root %+v", r)
	}
	var got []string
	for _, l := range sum.Meta.Limitations {
		got = append(got, l.Code)
	}
	slices.Sort(got)
	if want := []string{catalog.LimitDepth, catalog.LimitRootUnresolved, catalog.LimitUnresolvedDependency}; !slices.Equal(got, want) {
		t.Errorf("limitations %v, want %v", got, want)
	}
	var cl catalog.Closure
	readJSON(t, cs, CatalogClosureURI, &cl)
	if cl.Meta.CatalogID != sum.Meta.CatalogID || len(cl.Revisions) != 2 || len(cl.Unresolved) != 1 || cl.Unresolved[0].Reason.Code != catalog.ReasonBoundExceeded {
		t.Fatalf("closure: id %s vs %s, revisions %d, unresolved %+v", cl.Meta.CatalogID, sum.Meta.CatalogID, len(cl.Revisions), cl.Unresolved)
	}

	// The lookup echoes the identity it parsed and finds the dependency.
	domain := reg.Host + "/acme"
	res, out := lookup(t, cs, map[string]any{"name": "payments", "domain": domain, "scheme": "oci", "digest": depDigest})
	if res.IsError || out["found"] != true || out["catalogId"] != sum.Meta.CatalogID {
		t.Fatalf("lookup: %s", text(res))
	}
	if req := out["requested"].(map[string]any); req["service"].(map[string]any)["domain"] != domain {
		t.Errorf("requested %v", req)
	}
	// A miss in a partial catalog says unknown, not absent.
	res, out = lookup(t, cs, map[string]any{"name": "gone", "domain": "127.0.0.1:1/acme", "scheme": "oci", "digest": depDigest})
	if res.IsError || out["found"] != false || out["completeness"] != "partial" || !strings.Contains(text(res), "unknown, not proven absent") {
		t.Errorf("miss: %s %v", text(res), out)
	}

	// The tag moves: a refresh publishes a new catalog, and the same
	// session reads it.
	second := pushContract(t, c, reg.Host, "orders", "stable", "1.1.0", map[string]string{"payments": base + "payments:1.0.0"})
	if _, changed := live.Refresh(t.Context()); !changed {
		t.Fatal("the moved tag did not change the catalog")
	}
	var after catalog.Summary
	readJSON(t, cs, CatalogURI, &after)
	if after.Meta.CatalogID == sum.Meta.CatalogID || after.Roots[0].Revision.Content.Digest != second {
		t.Errorf("after the move: id %s (was %s), root %s (want %s)", after.Meta.CatalogID, sum.Meta.CatalogID, after.Roots[0].Revision.Content.Digest, second)
	}
	_, out = lookup(t, cs, map[string]any{"name": "orders", "domain": domain, "scheme": "oci", "digest": first})
	if out["found"] != false || len(out["candidates"].([]any)) != 1 {
		t.Errorf("the old revision after the move: %v", out)
	}
}

// TestCatalogRefreshFollowsMovedTag runs the server's own refresh loop
// (--catalog-refresh) against the registry: the moved tag shows up as a
// new catalogId without a restart.
func TestCatalogRefreshFollowsMovedTag(t *testing.T) {
	reg, c := catalogRegistry(t)
	pushContract(t, c, reg.Host, "orders", "stable", "1.0.0", nil)
	s, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Registry: c,
		Catalog: CatalogOptions{Roots: []string{"oci://" + reg.Host + "/acme/orders:stable"}, Refresh: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.ToolNames(), "pacto_catalog_revision") || !slices.Contains(s.ToolNames(), "pacto_create") {
		t.Fatalf("--root adds the catalog family to the default ones: %v", s.ToolNames())
	}
	cs := connect(t.Context(), t, s)
	before := resolvedCatalog(t, cs)
	// The cache hint of a catalog read is the refresh interval: what is
	// read now holds until the next refresh at the latest.
	for _, uri := range []string{CatalogURI, CatalogClosureURI} {
		res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if res.TTLMs != 20 {
			t.Errorf("resources/read %s: ttlMs %d, want the refresh interval, 20", uri, res.TTLMs)
		}
	}
	moved := pushContract(t, c, reg.Host, "orders", "stable", "2.0.0", nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var now catalog.Summary
		readJSON(t, cs, CatalogURI, &now)
		if now.Meta.CatalogID != before.Meta.CatalogID {
			if d := now.Roots[0].Revision.Content.Digest; d != moved {
				t.Errorf("new catalog's root %s, want %s", d, moved)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the refresh loop never noticed the moved tag")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCatalogOptions: the family needs roots, an empty root is refused,
// bounds above the ceiling name their option field.
func TestCatalogOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Families: []Family{FamilyCatalog}}, "the catalog family needs Catalog.Roots"},
		{Options{Catalog: CatalogOptions{Roots: []string{""}}}, "Catalog.Roots[0] is empty"},
		{Options{Catalog: CatalogOptions{Roots: []string{"."}, Refresh: -time.Second}}, "Catalog.Refresh must not be negative"},
		{Options{Catalog: CatalogOptions{Roots: []string{"."}, Bounds: catalog.Bounds{MaxDepth: 99}}}, "Catalog.Bounds.MaxDepth is 99: the ceiling is 25"},
	} {
		tc.opts.Workspace = t.TempDir()
		_, err := NewServer(t.Context(), &tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts.Catalog, err, tc.want)
		}
	}
}

// TestCatalogCombinesWithOtherFamilies: authoring, fleet and catalog on
// one server, each with its tools, the catalog's resources listed.
func TestCatalogCombinesWithOtherFamilies(t *testing.T) {
	s := fleetServer2(t, []Family{FamilyAuthoring, FamilyFleet})
	if slices.Contains(s.ToolNames(), "pacto_catalog_revision") {
		t.Fatal("catalog tool without roots")
	}
	root, err := filepath.Abs("../examples/bundles/catalog")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyAuthoring, FamilyFleet, FamilyCatalog},
		Fleet: FleetOptions{Enabled: true, Local: []string{"../examples/bundles"}}, Catalog: CatalogOptions{Roots: []string{root}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pacto_create", "pacto_fleet_search", "pacto_catalog_revision", "pacto_server_info"} {
		if !slices.Contains(s2.ToolNames(), want) {
			t.Errorf("%s missing from %v", want, s2.ToolNames())
		}
	}
	cs := connect(t.Context(), t, s2)
	var uris []string
	for r, err := range cs.Resources(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI+" "+r.Name)
	}
	if want := []string{CatalogURI + " pacto_catalog", CatalogClosureURI + " pacto_catalog_closure"}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	sum := resolvedCatalog(t, cs)
	if len(sum.Roots) != 1 || !sum.Roots[0].Resolved || sum.Roots[0].Revision.Content.Scheme != catalog.SchemeLocal {
		t.Errorf("local root %+v", sum.Roots)
	}
}

// TestCatalogToolListSize pins the catalog family's share of tools/list
// under 1,000 cl100k tokens, error alternative included.
func TestCatalogToolListSize(t *testing.T) {
	const tokenBudget = 1000
	z := toolListSizes(t, catalogServer(t), func(n string) bool { return strings.HasPrefix(n, "pacto_catalog") })
	t.Logf("catalog family tools/list: %d bytes, %d tokens (bytes/4: %d)", z.keptBytes, z.keptTokens, z.keptBytes/4)
	if z.keptTokens > tokenBudget {
		t.Errorf("catalog family tools/list is %d bytes, %d tokens; want ≤ %d tokens", z.keptBytes, z.keptTokens, tokenBudget)
	}
}

// catalogServer serves the catalog family alone over a local root.
func catalogServer(t *testing.T) *Server {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte("pactoVersion: \"2.0\"\nservice:\n  name: solo\n  version: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyCatalog}, Catalog: CatalogOptions{Roots: []string{dir}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCloseEndsTheCatalogRefresh: the refresh loop is the server's
// background work; Close returns once it has ended.
func TestCloseEndsTheCatalogRefresh(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte("pactoVersion: \"2.0\"\nservice:\n  name: solo\n  version: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyCatalog}, Catalog: CatalogOptions{Roots: []string{dir}, Refresh: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}

// TestCatalogServesBeforeFirstResolution starts a server whose catalog
// has a root on a registry that accepts and never answers, beside a
// healthy one, and connects a real client over Streamable HTTP once the
// stalled registry holds the server's request: initialize, tools/list,
// the resources and the lookup all answer while that request is still
// unanswered, as partial with a RESOLVING limitation, uncached. Closing
// the server ends the resolution.
func TestCatalogServesBeforeFirstResolution(t *testing.T) {
	stall := testregistry.NewStall()
	stalled := testregistry.New(t, &testregistry.Options{Wrap: stall.Wrap})
	reg, c := catalogRegistry(t)
	pushContract(t, c, reg.Host, "orders", "1.0.0", "1.0.0", nil)
	// A registry timeout far beyond the test, so the stalled request is
	// still held when the client is served.
	patient, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, NoRetry: true, AllowedRegistries: []string{"127.0.0.1"}, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(t.Context(), &Options{Transport: TransportHTTP, Workspace: t.TempDir(), Registry: patient, Families: []Family{FamilyCatalog},
		Catalog: CatalogOptions{Roots: []string{"oci://" + stalled.Host + "/acme/held:1.0.0", "oci://" + reg.Host + "/acme/orders:1.0.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, s)
	<-stall.Asked()

	cs, err := httpClient(t.Context(), t, url, "2025-11-25", nil)
	if err != nil {
		t.Fatalf("initialize while a registry stalls: %v", err)
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: CatalogURI})
	if err != nil {
		t.Fatal(err)
	}
	if res.TTLMs != 0 {
		t.Errorf("the placeholder carries ttlMs %d; it must not be cached", res.TTLMs)
	}
	var sum catalog.Summary
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Meta.Completeness != catalog.CompletenessPartial || len(sum.Meta.Limitations) != 1 || sum.Meta.Limitations[0].Code != catalog.LimitResolving ||
		len(sum.Roots) != 2 || sum.Roots[1].Reason == nil || sum.Roots[1].Reason.Code != catalog.ReasonResolving {
		t.Errorf("while resolving: %+v", sum)
	}
	var cl catalog.Closure
	readJSON(t, cs, CatalogClosureURI, &cl)
	if cl.Meta.CatalogID != sum.Meta.CatalogID || len(cl.Revisions) != 0 {
		t.Errorf("closure while resolving: %+v", cl)
	}
	r, out := lookup(t, cs, map[string]any{"name": "orders", "domain": reg.Host + "/acme", "scheme": "oci", "digest": "sha256:" + strings.Repeat("0", 64)})
	if r.IsError || out["found"] != false || out["completeness"] != catalog.CompletenessPartial || !strings.Contains(text(r), "still being resolved") {
		t.Errorf("lookup while resolving: %s", text(r))
	}
	if stall.Held() == 0 {
		t.Fatal("the stalled registry gave up its request before the client was served: the test proves nothing")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCatalogStalledDependencyIsALimitation serves a catalog whose root,
// on a healthy registry, depends on one registry that never answers and
// one that answers slowly: the slow one and the healthy ones resolve,
// and the stalled dependency is unresolved with a limitation naming it
// and the registry timeout, read through a real client over
// Streamable HTTP (the stateless era).
func TestCatalogStalledDependencyIsALimitation(t *testing.T) {
	stall := testregistry.NewStall()
	stalled := testregistry.New(t, &testregistry.Options{Wrap: stall.Wrap})
	slow := testregistry.New(t, &testregistry.Options{Wrap: testregistry.Delay(20 * time.Millisecond)})
	reg, c := catalogRegistry(t)
	held := "oci://" + stalled.Host + "/acme/held:1.0.0"
	pushContract(t, c, slow.Host, "ledger", "1.0.0", "1.0.0", nil)
	pushContract(t, c, reg.Host, "payments", "1.0.0", "1.0.0", nil)
	pushContract(t, c, reg.Host, "orders", "1.0.0", "1.0.0", map[string]string{
		"held": held, "ledger": "oci://" + slow.Host + "/acme/ledger:1.0.0", "payments": "oci://" + reg.Host + "/acme/payments:1.0.0"})
	timed, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, NoRetry: true, AllowedRegistries: []string{"127.0.0.1"}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(t.Context(), &Options{Transport: TransportHTTP, Workspace: t.TempDir(), Registry: timed, Families: []Family{FamilyCatalog},
		Catalog: CatalogOptions{Roots: []string{"oci://" + reg.Host + "/acme/orders:1.0.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := httpClient(t.Context(), t, serveHTTP(t, s), "2026-07-28", nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := resolvedCatalog(t, cs)
	var cl catalog.Closure
	readJSON(t, cs, CatalogClosureURI, &cl)
	var names []string
	for _, r := range cl.Revisions {
		names = append(names, r.Service.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"ledger", "orders", "payments"}) {
		t.Errorf("revisions %v, want ledger, orders, payments", names)
	}
	if len(sum.Meta.Limitations) != 1 {
		t.Fatalf("limitations %+v", sum.Meta.Limitations)
	}
	l := sum.Meta.Limitations[0]
	if l.Code != catalog.LimitUnresolvedDependency || l.Ref != held || !strings.Contains(l.Message, `dependency "held"`) || !strings.Contains(l.Message, "did not answer within 2s (--registry-timeout)") {
		t.Errorf("limitation %+v; want one naming the held dependency and the 2s timeout", l)
	}
	if len(cl.Unresolved) != 1 || cl.Unresolved[0].Reason.Code != catalog.ReasonUnavailable {
		t.Errorf("unresolved %+v", cl.Unresolved)
	}
}

// TestCatalogReadHintIsTheServedCatalogs: a read's cache hint belongs to
// the catalog that read served. The SDK asks for the hint after the
// handler has returned; a first resolution ending in between once made
// the server hint the whole refresh interval for the RESOLVING
// placeholder, and a client (the Go SDK's caches reads) then kept the
// placeholder for a minute. This is that order of steps, without the
// timing: serve the placeholder, let the resolution end, then settle the
// result's hint as the server does.
func TestCatalogReadHintIsTheServedCatalogs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte("pactoVersion: \"2.0\"\nservice:\n  name: orders\n  version: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := catalog.NewResolvingLive(&catalog.Options{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyCatalog}, Catalog: CatalogOptions{Live: live}})
	if err != nil {
		t.Fatal(err)
	}
	st := &catalogState{live: live, refresh: time.Minute}
	summary := func(c *catalog.Catalog) any { return c.Summary() }
	req := &sdk.ReadResourceRequest{Params: &sdk.ReadResourceParams{URI: CatalogURI}}

	placeholder, err := st.serve(CatalogURI, summary)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed := live.Refresh(t.Context()); !changed || live.Current().Resolving() {
		t.Fatal("the first resolution did not publish a catalog")
	}
	s.cacheHints(t.Context(), req, &placeholder.Cacheable)
	if !strings.Contains(placeholder.Contents[0].Text, catalog.LimitResolving) || placeholder.TTLMs != 0 {
		t.Errorf("the placeholder, read before the resolution ended, carries ttlMs %d; it must not be cached", placeholder.TTLMs)
	}

	resolved, err := st.serve(CatalogURI, summary)
	if err != nil {
		t.Fatal(err)
	}
	s.cacheHints(t.Context(), req, &resolved.Cacheable)
	if strings.Contains(resolved.Contents[0].Text, catalog.LimitResolving) || resolved.TTLMs != int(time.Minute.Milliseconds()) {
		t.Errorf("the resolved catalog carries ttlMs %d, want the refresh interval, %d", resolved.TTLMs, time.Minute.Milliseconds())
	}
}
