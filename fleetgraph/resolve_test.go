package fleetgraph_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"

	"github.com/kubepact/kubepact/bundle/diff"
)

// edgeFleet publishes revisions and targets and checks the snapshot.
func edgeFleet(t *testing.T, revs []*fleetgraph.Revision, tgts ...*fleetgraph.Target) *fleetgraph.Snapshot {
	t.Helper()
	b := fleetgraph.NewBuilder(nil)
	for _, r := range revs {
		if r.Source == "" {
			r.Source = "test"
		}
		if err := b.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range tgts {
		if err := b.UpsertTarget(tg); err != nil {
			t.Fatal(err)
		}
	}
	s := b.Flush()
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return s
}

// One bundle mirrored into two registries is two services with the same
// digest: an edge pinned by digest to one of them resolves to the service
// its reference names, not to whichever sorts first.
func TestPinnedEdgeResolvesToTheNamedMirror(t *testing.T) {
	const d = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	s := edgeFleet(t, []*fleetgraph.Revision{
		{Domain: "reg.a/org", Name: "ledger", Version: "1.0.0", Digest: d},
		{Domain: "reg.b/org", Name: "ledger", Version: "1.0.0", Digest: d},
		{Name: "app", Version: "1.0.0", Digest: "sha256:aa", Edges: []fleetgraph.Edge{
			{Type: fleetgraph.EdgeDependency, Name: "ledger", Ref: "oci://reg.b/org/ledger@" + d, Required: true},
		}},
	})
	got, err := s.Get(fleetgraph.GetQuery{Service: "app"})
	if err != nil {
		t.Fatal(err)
	}
	want := fleetgraph.ServiceKey("reg.b/org", "ledger")
	if len(got.Dependencies) != 1 || got.Dependencies[0].ToService != want || got.Dependencies[0].ResolvedRevision != fleetgraph.RevisionKey(want, d) {
		t.Errorf("dependencies = %+v, want one resolved to %s", got.Dependencies, want)
	}
	for _, mirror := range []string{fleetgraph.ServiceKey("reg.a/org", "ledger"), want} {
		g, err := s.Get(fleetgraph.GetQuery{Service: mirror})
		if err != nil {
			t.Fatal(err)
		}
		wantDeps := []string{}
		if mirror == want {
			wantDeps = []string{"app"}
		}
		if diff := cmp.Diff(g.Dependents, wantDeps); diff != "" {
			t.Errorf("%s dependents (-got +want):\n%s", mirror, diff)
		}
	}
}

// A dependency's name is the contract's own label for it; an edge pinned
// by digest reaches the revision whatever the label says. The reverse
// direction (dependents, impact) must find the edge the forward one
// resolves.
func TestDependentsFollowDigestPinnedEdges(t *testing.T) {
	const d = "sha256:0000000000000000000000000000000000000000000000000000000000000002"
	s := edgeFleet(t, []*fleetgraph.Revision{
		{Domain: "reg/org", Name: "postgres", Version: "16.0.0", Digest: d},
		{Name: "orders", Version: "1.0.0", Digest: "sha256:bb", Edges: []fleetgraph.Edge{
			{Type: fleetgraph.EdgeDependency, Name: "db", Ref: "oci://reg/org/postgres@" + d, Required: true, Compatibility: "^16.0.0"},
		}},
	})
	pg := fleetgraph.ServiceKey("reg/org", "postgres")
	fwd, err := s.Graph(fleetgraph.GraphQuery{Service: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fwd.Edges) != 1 || fwd.Edges[0].ToService != pg {
		t.Fatalf("orders' dependencies: %+v, want one edge to %s", fwd.Edges, pg)
	}
	rev, err := s.Graph(fleetgraph.GraphQuery{Service: pg, Direction: fleetgraph.DirectionDependents})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range rev.Nodes {
		nodes = append(nodes, n.Key)
	}
	if diff := cmp.Diff(nodes, []string{pg, "orders"}); diff != "" {
		t.Errorf("postgres' dependents (-got +want):\n%s", diff)
	}
	got, err := s.Get(fleetgraph.GetQuery{Service: pg})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Dependents, []string{"orders"}) {
		t.Errorf("get postgres: dependents %v, want [orders]", got.Dependents)
	}
}

// A target that links to no revision has no edges of its own: graph from
// it must not fall back to every revision of its service (the aggregated
// service view), and must say why the walk is empty.
func TestGraphFromUnlinkedTargetWalksNoRevision(t *testing.T) {
	s := edgeFleet(t, []*fleetgraph.Revision{
		{Name: "a", Version: "1.0.0", Digest: "sha256:a1"},
		{Name: "b", Version: "1.0.0", Digest: "sha256:b1"},
		{Name: "svc", Version: "1.0.0", Digest: "sha256:s1", Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: "a", Ref: "oci://reg/a:1.0.0"}}},
		{Name: "svc", Version: "2.0.0", Digest: "sha256:s2", Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: "b", Ref: "oci://reg/b:1.0.0"}}},
	}, &fleetgraph.Target{Scope: "prod", Kind: "deployment", Name: "svc", Service: "svc", RequestedRef: "svc:3.0.0", Source: "test"},
		&fleetgraph.Target{Scope: "prod", Kind: "deployment", Name: "svc-v2", Service: "svc", RequestedRef: "svc:2.0.0", Source: "test"})
	got, err := s.Graph(fleetgraph.GraphQuery{Target: fleetgraph.TargetKey("prod", "deployment", "svc"), Transitive: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.Root != "svc" || got.Revision != "" || got.Aggregated || len(got.Edges) != 0 || len(got.Nodes) != 1 {
		t.Errorf("graph from an unlinked target: found %v root %q revision %q aggregated %v nodes %+v edges %+v; want the root alone",
			got.Found, got.Root, got.Revision, got.Aggregated, got.Nodes, got.Edges)
	}
	var codes []string
	for _, l := range got.Meta.Limitations {
		codes = append(codes, l.Code)
	}
	if !slices.Contains(codes, fleetgraph.LimitEvidenceMissing) {
		t.Errorf("limitations %v: want the target's link limitation", codes)
	}
	// The linked target walks exactly its revision's edges.
	got, err = s.Graph(fleetgraph.GraphQuery{Target: "svc-v2", Transitive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Edges) != 1 || got.Edges[0].ToService != "b" {
		t.Errorf("graph from the v2 target: edges %+v, want the one to b", got.Edges)
	}
}

// A published snapshot's source states cannot be changed through what a
// caller handed to SetSource or got back from Sources or Meta.
func TestSourceStatesAreNotShared(t *testing.T) {
	b := fleetgraph.NewBuilder(nil)
	st := fleetgraph.SourceState{ID: "oci", Kind: "oci", Status: fleetgraph.SourceUnavailable,
		Error: &fleetgraph.SourceError{Code: fleetgraph.ErrAuthFailed, Message: "the source refused access"}}
	b.SetSource(st)
	s := b.Flush()
	id := s.ID()
	st.Error.Code = "CHANGED_BY_THE_CALLER"
	s.Sources()[0].Error.Code = "CHANGED_BY_A_READER"
	s.Meta().Sources[0].Error.Code = "CHANGED_BY_A_READER"
	if got := s.Sources()[0].Error.Code; got != fleetgraph.ErrAuthFailed {
		t.Errorf("published source error code = %q, want %q", got, fleetgraph.ErrAuthFailed)
	}
	if got := s.Meta().Sources[0].Error.Code; got != fleetgraph.ErrAuthFailed {
		t.Errorf("meta source error code = %q, want %q", got, fleetgraph.ErrAuthFailed)
	}
	if err := s.CheckInvariants(); err != nil || s.ID() != id {
		t.Errorf("after the callers' writes: %v (id %s, was %s)", err, s.ID(), id)
	}
}

// A target whose digest contradicts the digest pinned in its own resolved
// reference is unresolved (inventory §5.1), not linked to either.
func TestSelfContradictingTargetIsUnresolved(t *testing.T) {
	const a, c = "sha256:00000000000000000000000000000000000000000000000000000000000000aa", "sha256:00000000000000000000000000000000000000000000000000000000000000cc"
	s := edgeFleet(t, []*fleetgraph.Revision{
		{Domain: "reg/org", Name: "svc", Version: "1.0.0", Digest: a},
		{Domain: "reg/org", Name: "svc", Version: "1.1.0", Digest: c},
	}, &fleetgraph.Target{Scope: "prod", Kind: "deployment", Name: "svc", Service: "svc", Domain: "reg/org", Digest: a, ResolvedRef: "oci://reg/org/svc@" + c, Source: "test"})
	got, err := s.Get(fleetgraph.GetQuery{Target: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Target == nil || got.Target.RevisionMatch != fleetgraph.LinkUnresolved || got.Target.ContractRevision != "" || got.Revision != nil {
		t.Fatalf("target = %+v, revision %+v; want unresolved, with no revision", got.Target, got.Revision)
	}
	if lims := got.Meta.Limitations; len(lims) == 0 || lims[len(lims)-1].Code != fleetgraph.LimitTargetRefConflict {
		t.Errorf("limitations %+v: want %s last", lims, fleetgraph.LimitTargetRefConflict)
	}
}

// An interface whose spec file goes away (or moves to a file that cannot
// be read) is a change the diff must report: consumers can no longer see
// the operations they call. Only both sides unreadable under one
// unchanged ref is no change.
func TestDiffReportsAnUnreadableSpec(t *testing.T) {
	older, err := bundle.LoadDir("../examples/bundles/payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, ref := range map[string]string{"removed file": "", "moved to a missing file": "interfaces/gone.yaml"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("../examples/bundles/payments")); err != nil {
				t.Fatal(err)
			}
			if ref == "" {
				if err := os.Remove(filepath.Join(dir, "interfaces", "openapi.yaml")); err != nil {
					t.Fatal(err)
				}
			} else {
				raw, err := os.ReadFile(filepath.Join(dir, "pacto.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				raw = []byte(strings.Replace(string(raw), "ref: interfaces/openapi.yaml", "ref: "+ref, 1))
				if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			newer, err := bundle.LoadDir(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := diff.Diff(t.Context(), older, newer)
			if err != nil {
				t.Fatal(err)
			}
			if c := diff.Classification(changes); c == diff.NonBreaking {
				t.Errorf("changes %+v classified %s; the spec of interface http can no longer be read", changes, c)
			}
		})
	}
}

// writeBundle writes a minimal bundle of one service and loads it.
func writeBundle(t *testing.T, name, version string) *bundle.Bundle {
	t.Helper()
	dir := t.TempDir()
	raw := "pactoVersion: \"2.0\"\nservice:\n  name: " + name + "\n  version: " + version + "\nworkload: service\n"
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edgeViews are the answers that must agree on where an edge points: the
// forward dependency, the target's dependents (get, search by dependency,
// graph, impact) and the unresolved_deps attention list.
type edgeViews struct {
	To, Reason string   // orders' only dependency, "" when unresolved
	Dependents []string // get
	Search     []string // search has_dependency
	Graph      []string // graph, dependents direction, without the root
	Consumers  []string // impact
	Unresolved []string // status unresolved_deps, by service
}

func viewEdges(t *testing.T, s *fleetgraph.Snapshot, target string) edgeViews {
	t.Helper()
	var v edgeViews
	got, err := s.Get(fleetgraph.GetQuery{Service: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Dependencies) != 1 {
		t.Fatalf("orders has dependencies %+v, want one", got.Dependencies)
	}
	if d := got.Dependencies[0]; d.Resolved {
		v.To = d.ToService
	} else {
		v.Reason = d.Reason
	}
	tg, err := s.Get(fleetgraph.GetQuery{Service: target})
	if err != nil {
		t.Fatal(err)
	}
	v.Dependents = tg.Dependents
	sr, err := s.Search(fleetgraph.SearchQuery{HasDependency: target})
	if err != nil {
		t.Fatal(err)
	}
	v.Search = []string{}
	for _, sv := range sr.Services {
		v.Search = append(v.Search, sv.Key)
	}
	g, err := s.Graph(fleetgraph.GraphQuery{Service: target, Direction: fleetgraph.DirectionDependents, Transitive: true})
	if err != nil {
		t.Fatal(err)
	}
	v.Graph = []string{}
	for _, n := range g.Nodes[1:] {
		v.Graph = append(v.Graph, n.Key)
	}
	name := target[strings.LastIndex(target, "/")+1:]
	imp, err := s.Impact(t.Context(), writeBundle(t, name, "1.0.0"), writeBundle(t, name, "1.1.0"), &fleetgraph.ImpactOptions{Domain: domainOf(target, name)})
	if err != nil {
		t.Fatal(err)
	}
	v.Consumers = []string{}
	for _, c := range imp.Consumers {
		v.Consumers = append(v.Consumers, c.Service)
	}
	st, err := s.Status(fleetgraph.StatusQuery{UnresolvedDeps: true})
	if err != nil {
		t.Fatal(err)
	}
	v.Unresolved = []string{}
	for _, it := range st.Items {
		v.Unresolved = append(v.Unresolved, it.Service)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return v
}

// domainOf recovers the domain of a test service key (no escaped
// characters other than the domain's slashes).
func domainOf(key, name string) string {
	d := strings.TrimSuffix(key, "/"+name)
	if d == key {
		return ""
	}
	return strings.ReplaceAll(d, "%2F", "/")
}

// A dependency's name is a local alias (pacto_create derives it from the
// ref's last segment, users rename it): an unpinned edge resolves to the
// service its reference names — domain and repository, so a mirror in
// another registry is another service — and falls back to the alias only
// when the reference names no service in the snapshot. Every view of the
// edge agrees, also as services come and go in later snapshots.
func TestUnpinnedEdgeResolvesByItsReference(t *testing.T) {
	pg := fleetgraph.ServiceKey("reg/org", "postgres")
	orders := func(name, ref string) *fleetgraph.Revision {
		return &fleetgraph.Revision{Name: "orders", Version: "1.0.0", Digest: "sha256:0d", Source: "test", Edges: []fleetgraph.Edge{
			{Type: fleetgraph.EdgeDependency, Name: name, Ref: ref, Required: true, Compatibility: "^1.0.0"}}}
	}
	rev := func(domain, name, digest string) *fleetgraph.Revision {
		return &fleetgraph.Revision{Domain: domain, Name: name, Version: "1.0.0", Digest: digest, Source: "test"}
	}
	// resolved: the edge reaches the service viewed; elsewhere: it
	// reaches to, and the service viewed has no dependents.
	resolved := func(to string) edgeViews {
		return edgeViews{To: to, Dependents: []string{"orders"}, Search: []string{"orders"}, Graph: []string{"orders"}, Consumers: []string{"orders"}, Unresolved: []string{}}
	}
	elsewhere := func(to string) edgeViews {
		return edgeViews{To: to, Dependents: []string{}, Search: []string{}, Graph: []string{}, Consumers: []string{}, Unresolved: []string{}}
	}
	for _, tc := range []struct {
		name   string
		revs   []*fleetgraph.Revision
		target string
		want   edgeViews
	}{{
		name:   "renamed dependency",
		revs:   []*fleetgraph.Revision{orders("db", "oci://reg/org/postgres:1"), rev("reg/org", "postgres", "sha256:01")},
		target: pg,
		want:   resolved(pg),
	}, {
		name:   "the reference wins over a service named like the alias",
		revs:   []*fleetgraph.Revision{orders("db", "oci://reg/org/postgres:1"), rev("reg/org", "postgres", "sha256:01"), rev("", "db", "sha256:02")},
		target: pg,
		want:   resolved(pg),
	}, {
		name:   "the alias is not a service the reference names",
		revs:   []*fleetgraph.Revision{orders("db", "oci://reg/org/postgres:1"), rev("reg/org", "postgres", "sha256:01"), rev("", "db", "sha256:02")},
		target: "db",
		// has_dependency also matches the name a contract declares, so
		// search finds orders by its alias; nothing else points at db.
		want: func() edgeViews { v := elsewhere(pg); v.Search = []string{"orders"}; return v }(),
	}, {
		name:   "the named mirror, not the other",
		revs:   []*fleetgraph.Revision{orders("db", "oci://reg/org/postgres:1"), rev("reg/org", "postgres", "sha256:01"), rev("mirror/org", "postgres", "sha256:01")},
		target: fleetgraph.ServiceKey("mirror/org", "postgres"),
		want:   elsewhere(pg),
	}, {
		name:   "alias when the reference names no service",
		revs:   []*fleetgraph.Revision{orders("cache", "oci://reg/org/redis-bundle:7"), rev("", "cache", "sha256:03")},
		target: "cache",
		want:   resolved("cache"),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := edgeFleet(t, tc.revs)
			if diff := cmp.Diff(viewEdges(t, s, tc.target), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}

	// Incrementally: the edge resolves when postgres arrives after orders,
	// and is unresolved again when it leaves.
	b := fleetgraph.NewBuilder(nil)
	if err := b.UpsertRevision(orders("db", "oci://reg/org/postgres:1")); err != nil {
		t.Fatal(err)
	}
	if err := b.UpsertRevision(rev("", "db-other", "sha256:09")); err != nil {
		t.Fatal(err)
	}
	st, err := b.Flush().Status(fleetgraph.StatusQuery{UnresolvedDeps: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Items) != 1 || st.Items[0].Service != "orders" {
		t.Fatalf("before postgres: unresolved %+v, want orders' edge", st.Items)
	}
	if err := b.UpsertRevision(rev("reg/org", "postgres", "sha256:01")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(viewEdges(t, b.Flush(), pg), resolved(pg)); diff != "" {
		t.Errorf("after postgres arrived (-got +want):\n%s", diff)
	}
	b.DeleteRevision(fleetgraph.RevisionKey(pg, "sha256:01"))
	s := b.Flush()
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	st, err = s.Status(fleetgraph.StatusQuery{UnresolvedDeps: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Items) != 1 || st.Items[0].Service != "orders" {
		t.Errorf("after postgres left: unresolved %+v, want orders' edge", st.Items)
	}
}

// Impact says RESULT_TRUNCATED only when its consumer bound left a
// consumer out, not when the fleet has exactly that many.
func TestImpactTruncatesOnlyWhatItCuts(t *testing.T) {
	dep := func(name string, on ...string) *fleetgraph.Revision {
		r := &fleetgraph.Revision{Name: name, Version: "1.0.0", Digest: "sha256:" + name}
		for _, o := range on {
			r.Edges = append(r.Edges, fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: o, Ref: "oci://reg/" + o + ":1"})
		}
		return r
	}
	older, newer := writeBundle(t, "pg", "1.0.0"), writeBundle(t, "pg", "2.0.0")
	for _, tc := range []struct {
		name      string
		revs      []*fleetgraph.Revision
		want      []string
		truncated bool
	}{
		{"exactly the bound", []*fleetgraph.Revision{dep("pg"), dep("a", "pg"), dep("b", "pg")}, []string{"a", "b"}, false},
		{"exactly the bound, consumers of each other", []*fleetgraph.Revision{dep("pg"), dep("a", "pg", "b"), dep("b", "pg")}, []string{"a", "b"}, false},
		{"a direct consumer cut", []*fleetgraph.Revision{dep("pg"), dep("a", "pg"), dep("b", "pg"), dep("c", "pg")}, []string{"a", "b"}, true},
		{"a transitive consumer cut", []*fleetgraph.Revision{dep("pg"), dep("a", "pg"), dep("b", "pg"), dep("c", "a")}, []string{"a", "b"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := edgeFleet(t, tc.revs)
			got, err := s.Impact(t.Context(), older, newer, &fleetgraph.ImpactOptions{MaxConsumers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var consumers []string
			for _, c := range got.Consumers {
				consumers = append(consumers, c.Service)
			}
			truncated := slices.ContainsFunc(got.Meta.Limitations, func(l fleetgraph.Limitation) bool { return l.Code == fleetgraph.LimitResultTruncated })
			if diff := cmp.Diff(consumers, tc.want); diff != "" || truncated != tc.truncated {
				t.Errorf("truncated %v, want %v; consumers (-got +want):\n%s", truncated, tc.truncated, diff)
			}
		})
	}
}

// TestImpactStopsWhenCancelled: an impact whose call has ended does not
// diff or walk the fleet: it returns ctx's error.
func TestImpactStopsWhenCancelled(t *testing.T) {
	s := fleetgraph.NewBuilder(nil).Current()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Impact(ctx, writeBundle(t, "a", "1.0.0"), writeBundle(t, "a", "1.1.0"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("impact with a cancelled ctx: %v; want context.Canceled", err)
	}
	if _, err := s.Impact(t.Context(), writeBundle(t, "a", "1.0.0"), writeBundle(t, "a", "1.1.0"), nil); err != nil {
		t.Errorf("impact with a live ctx: %v", err)
	}
}
