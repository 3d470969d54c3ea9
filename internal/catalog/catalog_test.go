package catalog_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/catalog"
	"github.com/kubepact/kubepact/test/testregistry"
)

// dep is one dependency written into a test contract.
type dep struct{ name, ref, compat string }

// writeBundle writes a minimal contract of service name at version, with
// deps, into dir, and returns dir.
func writeBundle(t testing.TB, dir, name, version string, deps ...dep) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "pactoVersion: \"2.0\"\nservice:\n  name: %s\n  version: %s\n  owner:\n    team: team-%s\n", name, version, name)
	if len(deps) > 0 {
		b.WriteString("dependencies:\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "  - name: %s\n    ref: %q\n    required: true\n    compatibility: %q\n", d.name, d.ref, cmpOr(d.compat, "^1.0.0"))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// push pushes a bundle of service name at version with deps to
// host/acme/<repo>:<tag> and returns its digest.
func push(t testing.TB, c *oci.Client, host, repo, tag, name, version string, deps ...dep) string {
	t.Helper()
	dir := writeBundle(t, t.TempDir(), name, version, deps...)
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := oci.ParseReference(host + "/acme/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Push(t.Context(), ref, img)
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// client talks plain HTTP without retries: an unreachable registry fails
// at once.
func client(t testing.TB) *oci.Client {
	t.Helper()
	c, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, NoRetry: true, AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func build(t *testing.T, o *catalog.Options) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func codes(lims []catalog.Limitation) []string {
	var out []string
	for _, l := range lims {
		out = append(out, l.Code)
	}
	return out
}

// TestClosureFromRegistry resolves a root with its whole closure from a
// real registry: three revisions, deduplicated, ranked, with their edges
// and the two ways the shared one is reached.
func TestClosureFromRegistry(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := client(t)
	cDigest := push(t, c, reg.Host, "c", "1.0.0", "c", "1.0.0")
	push(t, c, reg.Host, "b", "1.0.0", "b", "1.0.0", dep{"c", "oci://" + reg.Host + "/acme/c:1.0.0", ""})
	aDigest := push(t, c, reg.Host, "a", "1.0.0", "a", "1.0.0",
		dep{"b", "oci://" + reg.Host + "/acme/b:1.0.0", ""}, dep{"c", "oci://" + reg.Host + "/acme/c@" + cDigest, ""})

	root := "oci://" + reg.Host + "/acme/a:1.0.0"
	cat := build(t, &catalog.Options{Roots: []string{root}, Client: c})
	cl := cat.Closure()
	if cl.Meta.Completeness != catalog.CompletenessComplete || len(cl.Meta.Limitations) != 0 {
		t.Fatalf("completeness %s, limitations %+v", cl.Meta.Completeness, cl.Meta.Limitations)
	}
	var got []string
	for _, r := range cl.Revisions {
		got = append(got, fmt.Sprintf("%s %s depth=%d rank=%s roots=%v paths=%d", r.Service.Name, r.Version, r.MinDepth, r.Rank, r.Roots, len(r.Paths)))
		if r.Service.Domain != reg.Host+"/acme" || r.Content.Scheme != catalog.SchemeOCI {
			t.Errorf("%s: identity %+v", r.Service.Name, r.RevisionID)
		}
	}
	want := []string{"a 1.0.0 depth=0 rank=root roots=[0] paths=1", "b 1.0.0 depth=1 rank=direct roots=[0] paths=1", "c 1.0.0 depth=1 rank=direct roots=[0] paths=2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
	if len(cl.Edges) != 3 || len(cl.Unresolved) != 0 || len(cl.Cycles) != 0 || len(cl.Conflicts) != 0 {
		t.Errorf("edges %d unresolved %d cycles %d conflicts %d", len(cl.Edges), len(cl.Unresolved), len(cl.Cycles), len(cl.Conflicts))
	}
	sum := cat.Summary()
	if r := sum.Roots[0]; !r.Resolved || r.Revision.Content.Digest != aDigest || r.ResolvedRef != "oci://"+reg.Host+"/acme/a@"+aDigest {
		t.Errorf("root %+v", r)
	}
	// The lookup takes the full identity and nothing less.
	id := catalog.RevisionID{Service: catalog.ServiceID{Domain: reg.Host + "/acme", Name: "c"}, Content: catalog.ContentID{Scheme: "oci", Digest: cDigest}}
	if r, ok := cat.Revision(id); !ok || r.Version != "1.0.0" || r.Owner != "team-c" {
		t.Errorf("Revision(%v) = %+v, %v", id, r, ok)
	}
	id.Service.Domain = ""
	if _, ok := cat.Revision(id); ok {
		t.Error("a revision was found without its domain")
	}
	if cands := cat.Candidates(id, 5); len(cands) != 1 || cands[0].Service.Domain != reg.Host+"/acme" {
		t.Errorf("candidates %+v", cands)
	}

	// The id depends on what was resolved, not on when or how it was asked.
	again := build(t, &catalog.Options{Roots: []string{"oci://" + reg.Host + "/acme/a@" + aDigest}, Client: c})
	if again.ID() != cat.ID() {
		t.Errorf("the same closure by digest has id %s, by tag %s", again.ID(), cat.ID())
	}
}

// TestMovedTagIsANewCatalog moves a root's tag in the registry: a refresh
// resolves it to the new digest and publishes a new catalog id; a refresh
// with nothing moved keeps the id and pulls no blob.
func TestMovedTagIsANewCatalog(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := client(t)
	first := push(t, c, reg.Host, "a", "stable", "a", "1.0.0")
	live, err := catalog.NewLive(t.Context(), &catalog.Options{Roots: []string{"oci://" + reg.Host + "/acme/a:stable"}, Client: c})
	if err != nil {
		t.Fatal(err)
	}
	before := live.Current()
	if d := before.Summary().Roots[0].Revision.Content.Digest; d != first {
		t.Fatalf("root digest %s, want %s", d, first)
	}

	reg.ResetRequests()
	if cur, changed := live.Refresh(t.Context()); changed || cur != before {
		t.Errorf("an unchanged tag changed the catalog: %s → %s", before.ID(), cur.ID())
	}
	if n := reg.BlobFetches(); n != 0 {
		t.Errorf("a refresh of an unchanged tag fetched %d blobs: %v", n, reg.Requests())
	}

	second := push(t, c, reg.Host, "a", "stable", "a", "1.1.0")
	cur, changed := live.Refresh(t.Context())
	if !changed || cur.ID() == before.ID() {
		t.Fatalf("a moved tag kept catalog %s", cur.ID())
	}
	if d := cur.Summary().Roots[0].Revision.Content.Digest; d != second {
		t.Errorf("after the move the root is %s, want %s", d, second)
	}
	if live.Current() != cur {
		t.Error("the new catalog was not published")
	}
	// The old catalog is untouched: a reader holding it sees what it saw.
	if d := before.Summary().Roots[0].Revision.Content.Digest; d != first {
		t.Errorf("the published catalog changed under its reader: %s", d)
	}
}

// TestBoundsCheckedBeforeResolving: a dependency beyond maxDepth, or a new
// revision beyond maxRevisions, is never asked of the registry; it is
// unresolved with BOUND_EXCEEDED and the catalog says which bound.
func TestBoundsCheckedBeforeResolving(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := client(t)
	push(t, c, reg.Host, "c", "1.0.0", "c", "1.0.0")
	push(t, c, reg.Host, "b", "1.0.0", "b", "1.0.0", dep{"c", "oci://" + reg.Host + "/acme/c:1.0.0", ""})
	push(t, c, reg.Host, "a", "1.0.0", "a", "1.0.0", dep{"b", "oci://" + reg.Host + "/acme/b:1.0.0", ""})
	root := "oci://" + reg.Host + "/acme/a:1.0.0"
	for _, tc := range []struct {
		name   string
		bounds catalog.Bounds
		limit  string
	}{
		{"depth", catalog.Bounds{MaxDepth: 1}, catalog.LimitDepth},
		{"revisions", catalog.Bounds{MaxRevisions: 2}, catalog.LimitRevisions},
		{"edges", catalog.Bounds{MaxEdges: 1}, catalog.LimitEdges},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.ResetRequests()
			cat := build(t, &catalog.Options{Roots: []string{root}, Client: c, Bounds: tc.bounds})
			cl := cat.Closure()
			if cl.Meta.Completeness != catalog.CompletenessPartial {
				t.Errorf("completeness %s", cl.Meta.Completeness)
			}
			if !slices.Contains(codes(cl.Meta.Limitations), tc.limit) {
				t.Errorf("limitations %v lack %s", codes(cl.Meta.Limitations), tc.limit)
			}
			if len(cl.Revisions) != 2 || len(cl.Unresolved) != 1 || cl.Unresolved[0].Reason.Code != catalog.ReasonBoundExceeded || cl.Unresolved[0].Name != "c" {
				t.Errorf("revisions %d, unresolved %+v", len(cl.Revisions), cl.Unresolved)
			}
			for _, r := range reg.Requests() {
				if strings.Contains(r.Path, "/acme/c/") {
					t.Errorf("the registry was asked for c beyond the bound: %s", r)
				}
			}
			if cl.Meta.Bounds == catalog.DefaultBounds {
				t.Error("meta.bounds does not show the bounds that applied")
			}
		})
	}
}

// TestUnresolvedReasonsAreSanitised: an unreachable registry, a missing
// tag and a bad reference each leave their root visible with a code, and
// no registry or transport text reaches the catalog.
func TestUnresolvedReasonsAreSanitised(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := client(t)
	roots := []string{
		"oci://127.0.0.1:1/acme/gone:1.0.0",
		"oci://" + reg.Host + "/acme/missing:1.0.0",
		"oci://UPPER/case",
		"ftp://example.com/x",
		filepath.Join(t.TempDir(), "nowhere"),
	}
	cat := build(t, &catalog.Options{Roots: roots, Client: c})
	var got []string
	for _, r := range cat.Summary().Roots {
		if r.Resolved || r.Reason == nil {
			t.Fatalf("root %+v resolved", r)
		}
		got = append(got, r.Reason.Code)
		for _, leak := range []string{"connection refused", "dial tcp", "127.0.0.1:1", "MANIFEST_UNKNOWN", "oci: "} {
			if strings.Contains(r.Reason.Message, leak) {
				t.Errorf("root %d reason %q leaks %q", r.ID, r.Reason.Message, leak)
			}
		}
	}
	want := []string{catalog.ReasonUnavailable, catalog.ReasonNotFound, catalog.ReasonInvalidReference, catalog.ReasonInvalidReference, catalog.ReasonNotFound}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	m := cat.Meta()
	if m.Completeness != catalog.CompletenessPartial || len(m.Limitations) != len(roots) || !slices.Equal(m.RequestedRoots, roots) {
		t.Errorf("meta %+v", m)
	}
	if cl := cat.Closure(); cl.Revisions == nil || len(cl.Revisions) != 0 || cl.Edges == nil {
		t.Errorf("an empty closure must be [] collections, got %+v", cl)
	}
}

// TestLocalRefInsideRegistryBundleRefused: a registry bundle may not make
// the catalog read local files, whatever path it names.
func TestLocalRefInsideRegistryBundleRefused(t *testing.T) {
	reg := testregistry.New(t, nil)
	c := client(t)
	secret := writeBundle(t, t.TempDir(), "secret", "1.0.0")
	push(t, c, reg.Host, "a", "1.0.0", "a", "1.0.0", dep{"s", secret, ""}, dep{"s2", "file://" + secret, ""}, dep{"s3", "../secret", ""})
	cat := build(t, &catalog.Options{Roots: []string{"oci://" + reg.Host + "/acme/a:1.0.0"}, Client: c})
	cl := cat.Closure()
	if len(cl.Revisions) != 1 || len(cl.Unresolved) != 3 {
		t.Fatalf("revisions %d, unresolved %+v", len(cl.Revisions), cl.Unresolved)
	}
	for _, u := range cl.Unresolved {
		if u.Reason.Code != catalog.ReasonInvalidReference {
			t.Errorf("%s: %+v", u.Ref, u.Reason)
		}
	}
}

// TestLocalRootsCyclesAndConflicts: local roots with relative references,
// a cycle rotated to its smallest identity, and a declared range the
// resolved version does not meet.
func TestLocalRootsCyclesAndConflicts(t *testing.T) {
	dir := t.TempDir()
	writeBundle(t, filepath.Join(dir, "a"), "a", "1.0.0", dep{"b", "../b", ""})
	writeBundle(t, filepath.Join(dir, "b"), "b", "2.0.0", dep{"a", "../a", ""})
	// A byte-identical copy of a is the same revision: a path is not identity.
	writeBundle(t, filepath.Join(dir, "copy"), "a", "1.0.0", dep{"b", "../b", ""})
	cat := build(t, &catalog.Options{Roots: []string{filepath.Join(dir, "b"), filepath.Join(dir, "a"), filepath.Join(dir, "copy")}})
	cl := cat.Closure()
	if len(cl.Revisions) != 2 || len(cl.Edges) != 2 {
		t.Fatalf("revisions %d edges %d: %+v", len(cl.Revisions), len(cl.Edges), cl.Revisions)
	}
	if len(cl.Cycles) != 1 || cl.Cycles[0].Revisions[0].Service.Name != "a" || len(cl.Cycles[0].Revisions) != 2 {
		t.Errorf("cycles %+v", cl.Cycles)
	}
	if len(cl.Conflicts) != 1 || cl.Conflicts[0].Kind != catalog.ConflictDeclaration || cl.Conflicts[0].Service.Name != "b" {
		t.Errorf("conflicts %+v", cl.Conflicts)
	}
	for _, r := range cl.Revisions {
		if r.Content.Scheme != catalog.SchemeLocal || r.Service.Domain != "" || r.Rank != catalog.RankRoot {
			t.Errorf("%+v", r)
		}
	}
	if a := cl.Revisions[0]; !slices.Equal(a.Roots, []int{0, 1, 2}) || len(a.RequestedRefs) != 3 {
		t.Errorf("a: roots %v requested %v", a.Roots, a.RequestedRefs)
	}
	// Root order and paths are not identity.
	other := build(t, &catalog.Options{Roots: []string{filepath.Join(dir, "copy"), filepath.Join(dir, "b")}})
	if other.ID() != cat.ID() {
		t.Errorf("reordered roots over the same content: %s vs %s", other.ID(), cat.ID())
	}
}

// TestLimitationsBounded: many unresolved dependencies list at most
// maxUnresolved, and the limitations at most maxLimitations, each saying
// how many more there were.
func TestLimitationsBounded(t *testing.T) {
	var deps []dep
	for i := range 30 {
		deps = append(deps, dep{fmt.Sprintf("d%d", i), fmt.Sprintf("./missing-%d", i), ""})
	}
	dir := writeBundle(t, t.TempDir(), "wide", "1.0.0", deps...)
	cat := build(t, &catalog.Options{Roots: []string{dir}, Bounds: catalog.Bounds{MaxUnresolved: 5, MaxLimitations: 4}})
	cl := cat.Closure()
	if len(cl.Unresolved) != 5 {
		t.Errorf("unresolved %d, want 5", len(cl.Unresolved))
	}
	got := codes(cl.Meta.Limitations)
	want := []string{catalog.LimitUnresolvedDependency, catalog.LimitUnresolvedDependency, catalog.LimitUnresolvedDependency, catalog.LimitLimitations}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("limitations (-want +got):\n%s", diff)
	}
}

// TestOptionsRefusedBeforeResolving: options are checked before any
// resolver call, with the option field named.
func TestOptionsRefusedBeforeResolving(t *testing.T) {
	for _, tc := range []struct {
		opts *catalog.Options
		want string
	}{
		{nil, "Roots is empty"},
		{&catalog.Options{Roots: []string{"a", " "}}, "Roots[1] is empty"},
		{&catalog.Options{Roots: []string{"a"}, Bounds: catalog.Bounds{MaxDepth: 26}}, "Bounds.MaxDepth is 26: the ceiling is 25"},
		{&catalog.Options{Roots: []string{"a"}, Bounds: catalog.Bounds{MaxRevisions: -1}}, "Bounds.MaxRevisions is -1"},
	} {
		_, err := catalog.Build(t.Context(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.opts, err, tc.want)
		}
	}
	// Roots beyond maxRoots are listed, not resolved.
	dir := writeBundle(t, t.TempDir(), "a", "1.0.0")
	cat := build(t, &catalog.Options{Roots: []string{dir, dir, "/nonexistent"}, Bounds: catalog.Bounds{MaxRoots: 2}})
	if r := cat.Summary().Roots[2]; r.Resolved || r.Reason.Code != catalog.ReasonBoundExceeded || !slices.Contains(codes(cat.Meta().Limitations), catalog.LimitRoots) {
		t.Errorf("root beyond the bound: %+v, %v", r, cat.Meta().Limitations)
	}
}

// TestRegistryGoingAwayAndBack: a registry that stops answering makes the
// next refresh partial (its root UNAVAILABLE, a new id); once it answers
// again the catalog is the first one again, id included. A refresh cut
// short by its context publishes nothing.
func TestRegistryGoingAwayAndBack(t *testing.T) {
	reg := testregistry.New(t, nil)
	target, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "upstream connect error: secret-internal-host:5000", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	host := strings.TrimPrefix(front.URL, "http://")
	c := client(t)
	push(t, c, reg.Host, "a", "1.0.0", "a", "1.0.0")

	live, err := catalog.NewLive(t.Context(), &catalog.Options{Roots: []string{"oci://" + host + "/acme/a:1.0.0"}, Client: c})
	if err != nil {
		t.Fatal(err)
	}
	first := live.Current()
	if first.Meta().Completeness != catalog.CompletenessComplete {
		t.Fatalf("through the proxy: %+v", first.Meta())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if cur, changed := live.Refresh(ctx); changed || cur != first {
		t.Error("a cancelled refresh replaced the catalog")
	}

	down.Store(true)
	gone, changed := live.Refresh(t.Context())
	if !changed || gone.Meta().Completeness != catalog.CompletenessPartial {
		t.Fatalf("registry down: changed %v, %+v", changed, gone.Meta())
	}
	r := gone.Summary().Roots[0]
	if r.Resolved || r.Reason.Code != catalog.ReasonUnavailable || strings.Contains(r.Reason.Message, "secret-internal-host") {
		t.Errorf("root while the registry is down: %+v", r)
	}

	down.Store(false)
	back, changed := live.Refresh(t.Context())
	if !changed || back.ID() != first.ID() {
		t.Errorf("registry back: changed %v, id %s, want %s", changed, back.ID(), first.ID())
	}
}

// TestStalledRegistryHoldsOnlyItsBranch resolves a catalog across three
// real registries on loopback: one that accepts and never answers, one
// that answers slowly and a healthy one. The stalled root is given
// first and stalled dependencies sit beside healthy and slow ones, so a
// resolver going one reference at a time would reach the others only
// after the stall. Every healthy and slow revision resolves, its depth
// included; each stalled reference is UNAVAILABLE with a limitation
// naming it and the timeout; nothing comes back CANCELLED; the healthy
// registry was asked while the stalled one still held a request; and the
// stalled registry, once it let a reference time out, is not asked again.
func TestStalledRegistryHoldsOnlyItsBranch(t *testing.T) {
	stall := testregistry.NewStall()
	var askedDuringStall atomic.Int64
	stalled := testregistry.New(t, &testregistry.Options{Wrap: stall.Wrap})
	slow := testregistry.New(t, &testregistry.Options{Wrap: testregistry.Delay(20 * time.Millisecond)})
	healthy := testregistry.New(t, &testregistry.Options{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stall.Held() > 0 {
				askedDuringStall.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}})
	c := client(t)
	ref := func(host, repo string) string { return "oci://" + host + "/acme/" + repo + ":1.0.0" }
	// The registry client bounds each operation (--registry-timeout).
	const timeout = 3 * time.Second
	timed, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, NoRetry: true, AllowedRegistries: []string{"127.0.0.1"}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, healthy.Host, "d", "1.0.0", "d", "1.0.0")
	push(t, c, slow.Host, "b", "1.0.0", "b", "1.0.0", dep{"d", ref(healthy.Host, "d"), ""})
	push(t, c, healthy.Host, "c", "1.0.0", "c", "1.0.0")
	push(t, c, healthy.Host, "a", "1.0.0", "a", "1.0.0",
		dep{"z", ref(stalled.Host, "z"), ""}, dep{"b", ref(slow.Host, "b"), ""}, dep{"c", ref(healthy.Host, "c"), ""}, dep{"y", ref(stalled.Host, "y"), ""})
	askedDuringStall.Store(0)

	// The context only keeps a resolver that ignores its timeout from
	// hanging the test; nothing here waits for it.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cat, err := catalog.Build(ctx, &catalog.Options{Roots: []string{ref(stalled.Host, "s"), ref(healthy.Host, "a")}, Client: timed})
	if err != nil {
		t.Fatal(err)
	}
	cl := cat.Closure()
	var got []string
	for _, r := range cl.Revisions {
		got = append(got, fmt.Sprintf("%s depth=%d", r.Service.Name, r.MinDepth))
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a depth=0", "b depth=1", "c depth=1", "d depth=2"}, got); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
	root := cat.Summary().Roots[0]
	if root.Resolved || root.Reason.Code != catalog.ReasonUnavailable || !strings.Contains(root.Reason.Message, "did not answer within 3s (--registry-timeout)") {
		t.Errorf("stalled root: %+v", root)
	}
	if len(cl.Unresolved) != 2 || cl.Unresolved[0].Name != "z" || cl.Unresolved[1].Name != "y" ||
		cl.Unresolved[0].Reason.Code != catalog.ReasonUnavailable || cl.Unresolved[1].Reason.Code != catalog.ReasonUnavailable {
		t.Fatalf("unresolved %+v", cl.Unresolved)
	}
	var lims []string
	for _, l := range cl.Meta.Limitations {
		lims = append(lims, l.Code+" "+l.Ref+": "+l.Message)
		if l.Code == catalog.LimitCancelled {
			t.Errorf("a healthy branch was cancelled: %+v", l)
		}
	}
	a := healthy.Host + "/acme/a@" + cat.Summary().Roots[1].Revision.Content.Scheme + ":" + cat.Summary().Roots[1].Revision.Content.Digest
	again := "the registry let an earlier reference time out and is not asked again in this resolution; retry, or raise --registry-timeout"
	want := []string{
		catalog.LimitRootUnresolved + " " + ref(stalled.Host, "s") + ": root 0 did not resolve (UNAVAILABLE): " + root.Reason.Message,
		fmt.Sprintf("%s %s: dependency \"z\" of %s did not resolve (UNAVAILABLE): %s", catalog.LimitUnresolvedDependency, ref(stalled.Host, "z"), a, again),
		fmt.Sprintf("%s %s: dependency \"y\" of %s did not resolve (UNAVAILABLE): %s", catalog.LimitUnresolvedDependency, ref(stalled.Host, "y"), a, again),
	}
	if diff := cmp.Diff(want, lims); diff != "" {
		t.Errorf("limitations (-want +got):\n%s", diff)
	}
	if cl.Meta.Completeness != catalog.CompletenessPartial {
		t.Errorf("completeness %s", cl.Meta.Completeness)
	}
	if n := stall.Total(); n != 1 {
		t.Errorf("the stalled registry was asked %d times, want once: after a timeout it is not asked again", n)
	}
	if askedDuringStall.Load() == 0 {
		t.Error("the healthy registry was only asked once the stalled one had given up: resolution is one reference at a time")
	}
}

// TestResolvingPlaceholder: a Live made to answer before resolving
// serves every root as RESOLVING under a RESOLVING limitation until its
// first refresh, which replaces it even when cut short.
func TestResolvingPlaceholder(t *testing.T) {
	dir := writeBundle(t, t.TempDir(), "a", "1.0.0")
	live, err := catalog.NewResolvingLive(&catalog.Options{Roots: []string{dir, "oci://127.0.0.1:1/acme/gone:1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	first := live.Current()
	m := first.Meta()
	if !first.Resolving() || m.Completeness != catalog.CompletenessPartial || !slices.Equal(codes(m.Limitations), []string{catalog.LimitResolving}) {
		t.Fatalf("placeholder: resolving %v, meta %+v", first.Resolving(), m)
	}
	for _, r := range first.Summary().Roots {
		if r.Resolved || r.Reason == nil || r.Reason.Code != catalog.ReasonResolving {
			t.Errorf("placeholder root %+v", r)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	cut, changed := live.Refresh(ctx)
	if !changed || cut.Resolving() || !slices.Contains(codes(cut.Meta().Limitations), catalog.LimitCancelled) {
		t.Errorf("a first refresh cut short: changed %v, %+v", changed, cut.Meta())
	}
	done, changed := live.Refresh(t.Context())
	if !changed || done.Resolving() || !done.Summary().Roots[0].Resolved {
		t.Errorf("first full refresh: changed %v, roots %+v", changed, done.Summary().Roots)
	}
	if _, err := catalog.NewResolvingLive(&catalog.Options{Roots: []string{dir}, RequestTimeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "RequestTimeout is -1s: want 0") {
		t.Errorf("negative timeout: %v", err)
	}
	if _, err := catalog.NewResolvingLive(&catalog.Options{Roots: []string{dir}, Concurrency: 65}); err == nil || !strings.Contains(err.Error(), "Concurrency is 65: want 0 (the default, 4) up to 64") {
		t.Errorf("concurrency above the ceiling: %v", err)
	}
}

// TestRequestTimeoutBoundsAReference: with Options.RequestTimeout below
// the registry client's timeout, a reference of a stalled registry ends
// at the catalog's bound, named as such.
func TestRequestTimeoutBoundsAReference(t *testing.T) {
	stall := testregistry.NewStall()
	stalled := testregistry.New(t, &testregistry.Options{Wrap: stall.Wrap})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // only against a hang
	defer cancel()
	cat, err := catalog.Build(ctx, &catalog.Options{Roots: []string{"oci://" + stalled.Host + "/acme/s:1.0.0"}, Client: client(t), RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r := cat.Summary().Roots[0]; r.Resolved || r.Reason.Code != catalog.ReasonUnavailable || r.Reason.Message != "the registry did not answer within 1s, the catalog's time for one reference" {
		t.Errorf("root %+v", r.Reason)
	}
}
