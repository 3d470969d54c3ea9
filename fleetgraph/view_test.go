package fleetgraph_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
)

// scopedFleet is a reproducible fleet spread over namespaces a, b and c
// (and, for some revisions, no namespace): services whose contract is in
// one namespace and whose workloads run in others, dependencies across
// namespaces, digests and tags, every compliance, stale evidence, and
// limitations with and without a scope.
type scopedFleet struct {
	revs []*fleetgraph.Revision
	tgts []*fleetgraph.Target
	src  fleetgraph.SourceState
	lims []fleetgraph.Limitation
}

func newScopedFleet(seed uint64, services int) scopedFleet {
	rng := rand.New(rand.NewPCG(seed, 7))
	scopes := []string{"a", "b", "c"}
	statuses := fleetgraph.Statuses()
	var f scopedFleet
	for i := range services {
		name := fmt.Sprintf("svc-%03d", i)
		for v := range 1 + rng.IntN(2) {
			r := &fleetgraph.Revision{
				Domain: "registry.example.com/team", Name: name, Version: fmt.Sprintf("1.%d.0", v),
				Digest: fmt.Sprintf("sha256:%060x%04d", i, v), Owner: fmt.Sprintf("team-%d", i%4), Workload: "service",
				Source: "kube", Scopes: publishers(rng), Capabilities: []string{"health"},
			}
			if rng.IntN(2) == 0 {
				r.Readiness = &fleetgraph.Readiness{Score: 80, MinScore: 70 + rng.IntN(20), Expires: "2099-01-01"}
			}
			if rng.IntN(5) == 0 {
				r.Valid = new(false)
			}
			for range rng.IntN(3) {
				j := rng.IntN(services + 3) // a few name no service at all
				r.Edges = append(r.Edges, fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: fmt.Sprintf("svc-%03d", j),
					Ref: fmt.Sprintf("oci://registry.example.com/team/svc-%03d", j), Required: true, Compatibility: "^1.0.0"})
			}
			f.revs = append(f.revs, r)
		}
		for k := range rng.IntN(4) {
			t := &fleetgraph.Target{
				Scope: scopes[rng.IntN(3)], Kind: "Deployment", Name: fmt.Sprintf("%s-%d", name, k), Service: name,
				Domain: "registry.example.com/team", Compliance: statuses[rng.IntN(len(statuses))], Source: "kube",
				EvidenceAt: testAsOf.Add(-time.Duration(rng.IntN(48)) * time.Hour), Labels: map[string]string{"env": []string{"prod", "dev"}[k%2]},
			}
			if rng.IntN(2) == 0 {
				t.ResolvedRef = fmt.Sprintf("oci://registry.example.com/team/%s:1.0.0", name)
			} else {
				t.Digest = fmt.Sprintf("sha256:%060x%04d", i, 0)
			}
			f.tgts = append(f.tgts, t)
		}
	}
	f.src = fleetgraph.SourceState{ID: "kube", Kind: "kubernetes", Status: fleetgraph.SourceAvailable, LastSuccessfulSync: testAsOf}
	f.lims = []fleetgraph.Limitation{
		{Code: fleetgraph.LimitRecordInvalid, Message: "ServiceContract a/broken has no digest yet", Source: "kube", Subject: "a/broken", Scope: "a"},
		{Code: fleetgraph.LimitRecordInvalid, Message: "ServiceContract b/broken has no digest yet", Source: "kube", Subject: "b/broken", Scope: "b"},
		{Code: fleetgraph.LimitRecordInvalid, Message: "a record outside any namespace", Source: "kube", Subject: "somewhere"},
		{Code: fleetgraph.LimitSourcePartial, Message: "a fleet-wide note", Source: "kube"},
		{Code: fleetgraph.LimitSourcePartial, Message: "deployments.apps could not be watched", Source: "kube", Subject: "deployments.apps", ClusterWide: true},
	}
	return f
}

// publishers are the namespaces publishing one revision: none (a source
// outside any namespace), one, or two — given out of order and with a
// repeat, as a feed may hand them over.
func publishers(rng *rand.Rand) []string {
	scopes := []string{"a", "b", "c"}
	switch rng.IntN(4) {
	case 0:
		return nil
	case 3:
		x, y := rng.IntN(3), rng.IntN(3)
		return []string{scopes[x], scopes[y], scopes[x]}
	}
	return []string{scopes[rng.IntN(3)]}
}

// seenAs is a revision as a reader with visibility v sees it: nil when v
// sees none of its scopes, else with only the scopes v sees.
func seenAs(v fleetgraph.Visibility, r *fleetgraph.Revision) *fleetgraph.Revision {
	if v.All() {
		return r
	}
	c := *r
	c.Scopes = slices.DeleteFunc(slices.Clone(r.Scopes), func(sc string) bool { return !v.Sees(sc) })
	if len(c.Scopes) == 0 {
		return nil
	}
	return &c
}

// build feeds the records v sees (all of them for AllScopes) to a new
// Builder, with the limitations v may see.
func (f scopedFleet) build(t testing.TB, v fleetgraph.Visibility) *fleetgraph.Snapshot {
	t.Helper()
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }, Freshness: 24 * time.Hour})
	for _, r := range f.revs {
		if r := seenAs(v, r); r != nil {
			if err := b.UpsertRevision(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tg := range f.tgts {
		if v.Sees(tg.Scope) {
			if err := b.UpsertTarget(tg); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lims []fleetgraph.Limitation
	for _, l := range f.lims {
		if v.All() || (l.Subject == "" || l.ClusterWide) && l.Scope == "" || l.Scope != "" && v.Sees(l.Scope) {
			lims = append(lims, l)
		}
	}
	b.SetSource(f.src, lims...)
	s := b.Flush()
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return s
}

// answers runs every query kind against s and returns the answers as
// JSON, with what identifies a snapshot or a view (the snapshot id, the
// cursors) left out: pages are followed with s's own cursors.
func answers(t *testing.T, s *fleetgraph.Snapshot, subjects []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	put := func(name string, v any, err error) {
		if err != nil {
			var qe *fleetgraph.QueryError
			if errors.As(err, &qe) {
				out[name] = "error " + qe.Code + ": " + qe.Message
				return
			}
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = normalized(t, v)
	}
	for i, q := range []fleetgraph.SearchQuery{
		{Limit: 7}, {Scope: "a", Limit: 5}, {Status: fleetgraph.StatusNonCompliant}, {Text: "svc-01"}, {HasDependency: "svc-003"},
		{Owner: "team-1"}, {Compliance: fleetgraph.StatusUnknown, Labels: "env=prod"}, {Ready: true}, {NotReady: true, Scope: "b"},
		{Workload: "service", HasCapability: "health"}, {Source: "kube", Limit: 3},
	} {
		for page := 0; ; page++ {
			res, err := s.Search(q)
			put(fmt.Sprintf("search %d page %d", i, page), res, err)
			if err != nil || res.NextCursor == "" {
				break
			}
			q.Cursor = res.NextCursor
		}
	}
	for page, q := 0, (fleetgraph.StatusQuery{Limit: 9}); ; page++ {
		res, err := s.Status(q)
		put(fmt.Sprintf("status page %d", page), res, err)
		if err != nil || res.NextCursor == "" {
			break
		}
		q.Cursor = res.NextCursor
	}
	for _, subj := range subjects {
		res, err := s.Get(fleetgraph.GetQuery{Service: subj})
		put("get service "+subj, res, err)
		res, err = s.Get(fleetgraph.GetQuery{Target: subj})
		put("get target "+subj, res, err)
		ex, err := s.Explain(fleetgraph.ExplainQuery{Subject: subj})
		put("explain "+subj, ex, err)
		for _, dir := range []string{fleetgraph.DirectionDependencies, fleetgraph.DirectionDependents} {
			g, err := s.Graph(fleetgraph.GraphQuery{Service: subj, Direction: dir, Transitive: true})
			put("graph "+dir+" "+subj, g, err)
		}
		d, miss := s.Dependency(subj)
		put("dependency "+subj, []any{d, miss}, nil)
	}
	return out
}

func normalized(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			delete(x, "snapshotId")
			delete(x, "nextCursor")
			for _, c := range x {
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(m)
	raw, _ = json.Marshal(m)
	return string(raw)
}

// toldNothingVisible is want as a reader who may see no scope gets it:
// every answer's meta is partial and ends with the NO_VISIBLE_SCOPE
// limitation.
func toldNothingVisible(t *testing.T, want map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range want {
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) != nil || m["meta"] == nil {
			out[k] = v
			continue
		}
		meta := m["meta"].(map[string]any)
		meta["completeness"] = fleetgraph.CompletenessPartial
		lims, _ := meta["limitations"].([]any)
		meta["limitations"] = append(lims, map[string]any{"code": fleetgraph.LimitNoVisibleScope,
			"message": "this reader may see none of the scopes in which the fleet has records, so this answer shows nothing: it cannot tell an empty fleet from one it may not see"})
		out[k] = normalized(t, m)
	}
	return out
}

// TestRestrictEqualsTheVisibleFleet is the view's contract: every answer
// of a restricted view equals the answer of a fleet that holds only the
// records the view sees — totals, pages, misses and their candidates,
// graphs, status and explanations included — so nothing hidden can show
// through. Subjects include every service and target name and key of the
// whole fleet, hidden ones too, and near misses.
func TestRestrictEqualsTheVisibleFleet(t *testing.T) {
	for seed := range uint64(3) {
		f := newScopedFleet(seed, 40)
		full := f.build(t, fleetgraph.AllScopes())
		var subjects []string
		for _, r := range f.revs {
			subjects = append(subjects, r.Name, r.ServiceKey(), r.Name+"x")
		}
		for _, tg := range f.tgts {
			subjects = append(subjects, tg.Name, tg.Key())
		}
		slices.Sort(subjects)
		subjects = slices.Compact(subjects)
		for _, v := range []fleetgraph.Visibility{
			fleetgraph.OnlyScopes("a"), fleetgraph.OnlyScopes("b", "c"), fleetgraph.OnlyScopes("c", "a", "b"),
			fleetgraph.OnlyScopes(), fleetgraph.OnlyScopes("elsewhere"), {},
		} {
			t.Run(fmt.Sprintf("seed%d/%v", seed, v.Scopes()), func(t *testing.T) {
				view := full.Restrict(v)
				if err := view.CheckInvariants(); err != nil {
					t.Fatal(err)
				}
				if view.ID() != full.ID() || view.AsOf() != full.AsOf() || view.Seq() != full.Seq() {
					t.Errorf("the view answers as %s/%v/%d, want the snapshot's %s/%v/%d", view.ID(), view.AsOf(), view.Seq(), full.ID(), full.AsOf(), full.Seq())
				}
				want := answers(t, f.build(t, v), subjects)
				if sv, revs, tgts := view.Counts(); sv+revs+tgts == 0 {
					// A reader who sees nothing is told so on every answer.
					want = toldNothingVisible(t, want)
				}
				got := answers(t, view, subjects)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("restricted view differs from the fleet of its visible records (-want +got):\n%s", diff)
				}
				for _, sc := range view.Scopes() {
					if !v.Sees(sc) {
						t.Errorf("the view holds records of scope %q, which it does not see", sc)
					}
				}
			})
		}
	}
}

// TestRestrictCursorsAreBoundToTheView: a cursor answers only in the view
// that issued it; another visibility, or the unrestricted snapshot, refuses
// it without reading a page.
func TestRestrictCursorsAreBoundToTheView(t *testing.T) {
	f := newScopedFleet(1, 60)
	full := f.build(t, fleetgraph.AllScopes())
	a, bc := full.Restrict(fleetgraph.OnlyScopes("a")), full.Restrict(fleetgraph.OnlyScopes("b", "c"))
	pageA, err := a.Search(fleetgraph.SearchQuery{Limit: 2})
	if err != nil || pageA.NextCursor == "" {
		t.Fatalf("first page of view a: %v, cursor %q", err, pageA.NextCursor)
	}
	pageFull, err := full.Search(fleetgraph.SearchQuery{Limit: 2})
	if err != nil || pageFull.NextCursor == "" {
		t.Fatalf("first page: %v", err)
	}
	stA, err := a.Status(fleetgraph.StatusQuery{Limit: 1})
	if err != nil || stA.NextCursor == "" {
		t.Fatalf("first status page of view a: %v", err)
	}
	for name, try := range map[string]func() error{
		"view a's search cursor in view b,c": func() error {
			_, err := bc.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: pageA.NextCursor})
			return err
		},
		"view a's search cursor unrestricted": func() error {
			_, err := full.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: pageA.NextCursor})
			return err
		},
		"the unrestricted cursor in view a": func() error {
			_, err := a.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: pageFull.NextCursor})
			return err
		},
		"view a's status cursor in view b,c": func() error {
			_, err := bc.Status(fleetgraph.StatusQuery{Limit: 1, Cursor: stA.NextCursor})
			return err
		},
	} {
		var qe *fleetgraph.QueryError
		if err := try(); !errors.As(err, &qe) || qe.Code != fleetgraph.CodeCursorInvalid {
			t.Errorf("%s: %v, want %s", name, err, fleetgraph.CodeCursorInvalid)
		}
	}
	if _, err := a.Search(fleetgraph.SearchQuery{Limit: 2, Cursor: pageA.NextCursor}); err != nil {
		t.Errorf("view a's cursor in view a: %v", err)
	}
	// The same visibility, however it is spelled, is the same view.
	if again := full.Restrict(fleetgraph.OnlyScopes("a", "a", "")); again != a {
		t.Error("Restrict built a second view for the same visibility")
	}
	if _, err := full.Restrict(fleetgraph.OnlyScopes("a")).Search(fleetgraph.SearchQuery{Limit: 2, Cursor: pageA.NextCursor}); err != nil {
		t.Errorf("view a's cursor in view a, looked up again: %v", err)
	}
}

// TestNoVisibleScopeIsSaid: a reader who may see no scope is told so, in
// the words its Scoper chose, on every answer — the same whether the fleet
// is empty or full, so the limitation reveals nothing either — and the
// view, built without walking the fleet, is carried into the next
// snapshot with it. Readers given the same words share one view.
func TestNoVisibleScopeIsSaid(t *testing.T) {
	const why = "you may list no contracts anywhere"
	full := newScopedFleet(1, 30).build(t, fleetgraph.AllScopes())
	empty := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }}).Flush()
	metaOf := func(s *fleetgraph.Snapshot) fleetgraph.Meta {
		t.Helper()
		res, err := s.Search(fleetgraph.SearchQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 0 || len(res.Services) != 0 {
			t.Errorf("a reader who sees nothing found %d services", res.Total)
		}
		return res.Meta
	}
	last := func(m fleetgraph.Meta) fleetgraph.Limitation {
		if len(m.Limitations) == 0 {
			return fleetgraph.Limitation{}
		}
		return m.Limitations[len(m.Limitations)-1]
	}
	for name, s := range map[string]*fleetgraph.Snapshot{"full fleet": full, "empty fleet": empty} {
		for _, tc := range []struct {
			v    fleetgraph.Visibility
			want string
		}{
			{fleetgraph.NoScopes(why), why},
			{fleetgraph.OnlyScopes(), "this reader may see none of the scopes in which the fleet has records"},
			{fleetgraph.OnlyScopes("elsewhere"), "this reader may see none of the scopes in which the fleet has records"},
		} {
			m := metaOf(s.Restrict(tc.v))
			if l := last(m); l.Code != fleetgraph.LimitNoVisibleScope || !strings.HasPrefix(l.Message, tc.want) || m.Completeness != fleetgraph.CompletenessPartial {
				t.Errorf("%s, %v: completeness %s, last limitation %+v; want partial, %s saying %q", name, tc.v.Scopes(), m.Completeness, l, fleetgraph.LimitNoVisibleScope, tc.want)
			}
		}
	}
	if first, second := full.Restrict(fleetgraph.NoScopes(why)), full.Restrict(fleetgraph.NoScopes(why)); first != second {
		t.Error("two readers given the same words got two views")
	}
	// Readers who see something are not told they see nothing.
	for _, v := range []fleetgraph.Visibility{fleetgraph.AllScopes(), fleetgraph.OnlyScopes("a")} {
		for _, l := range full.Restrict(v).Meta().Limitations {
			if l.Code == fleetgraph.LimitNoVisibleScope {
				t.Errorf("%v: told %s", v.Scopes(), l.Code)
			}
		}
	}

	// Carried: the next snapshot's view (advanced, not rebuilt) says it too.
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	if err := b.UpsertTarget(&fleetgraph.Target{Scope: "a", Kind: "kubernetes-workload", Name: "a/x", Service: "x", Source: "kube"}); err != nil {
		t.Fatal(err)
	}
	first := b.Flush()
	metaOf(first.Restrict(fleetgraph.NoScopes(why)))
	if err := b.UpsertTarget(&fleetgraph.Target{Scope: "a", Kind: "kubernetes-workload", Name: "a/y", Service: "y", Source: "kube"}); err != nil {
		t.Fatal(err)
	}
	if l := last(metaOf(b.Flush().Restrict(fleetgraph.NoScopes(why)))); l.Code != fleetgraph.LimitNoVisibleScope || l.Message != why {
		t.Errorf("the carried view's last limitation is %+v; want %s saying %q", l, fleetgraph.LimitNoVisibleScope, why)
	}
}

// TestRestrictShortcuts: seeing everything is the snapshot itself; so is
// seeing every scope of a fleet whose records all have one. Records
// outside any scope are never shown to a restricted reader.
func TestRestrictShortcuts(t *testing.T) {
	f := newScopedFleet(2, 30)
	full := f.build(t, fleetgraph.AllScopes())
	if full.Restrict(fleetgraph.AllScopes()) != full {
		t.Error("Restrict(AllScopes()) is not the snapshot itself")
	}
	if v := full.Restrict(fleetgraph.OnlyScopes("a", "b", "c")); v == full {
		t.Error("a fleet with unscoped records was not restricted for a reader of every scope")
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, full.Scopes()); diff != "" {
		t.Errorf("Scopes (-want +got):\n%s", diff)
	}
	scoped := f
	scoped.revs = slices.DeleteFunc(slices.Clone(f.revs), func(r *fleetgraph.Revision) bool { return len(r.Scopes) == 0 })
	scoped.lims = slices.DeleteFunc(slices.Clone(f.lims), func(l fleetgraph.Limitation) bool { return l.Subject != "" && l.Scope == "" && !l.ClusterWide })
	s := scoped.build(t, fleetgraph.AllScopes())
	if s.Restrict(fleetgraph.OnlyScopes("a", "b", "c", "d")) != s {
		t.Error("a reader of every scope of a fully scoped fleet got a view, not the snapshot")
	}
	var zero fleetgraph.Visibility
	if sv, revs, tgts := full.Restrict(zero).Counts(); sv+revs+tgts != 0 {
		t.Errorf("the zero Visibility sees %d services, %d revisions, %d targets; want nothing", sv, revs, tgts)
	}
	// Seeing nothing is said, never passed off as an empty fleet.
	if m := full.Restrict(zero).Meta(); m.Completeness != fleetgraph.CompletenessPartial || len(m.Limitations) == 0 || m.Limitations[len(m.Limitations)-1].Code != fleetgraph.LimitNoVisibleScope {
		t.Errorf("meta of a view that sees nothing: %+v; want partial, with %s", m, fleetgraph.LimitNoVisibleScope)
	}
	if full.Restrict(zero) != full.Restrict(fleetgraph.OnlyScopes()) {
		t.Error("the zero Visibility and OnlyScopes() are two views")
	}
}

// TestRestrictConcurrent: many readers of a few visibilities at once build
// each view once and all see the same one (run with -race).
func TestRestrictConcurrent(t *testing.T) {
	f := newScopedFleet(3, 50)
	full := f.build(t, fleetgraph.AllScopes())
	vis := []fleetgraph.Visibility{fleetgraph.OnlyScopes("a"), fleetgraph.OnlyScopes("b"), fleetgraph.OnlyScopes("a", "c")}
	got := make([][]*fleetgraph.Snapshot, len(vis))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 48 {
		wg.Go(func() {
			v := full.Restrict(vis[i%len(vis)])
			if _, err := v.Search(fleetgraph.SearchQuery{}); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[i%len(vis)] = append(got[i%len(vis)], v)
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, views := range got {
		for _, v := range views {
			if v != views[0] {
				t.Fatalf("visibility %v: readers got different views", vis[i].Scopes())
			}
		}
	}
}

// TestRestrictBoundsItsViews: a snapshot keeps at most 64 views; asking
// for more drops the least recently used, which is rebuilt on demand.
func TestRestrictBoundsItsViews(t *testing.T) {
	// One service in each of 100 namespaces, so every pair of namespaces
	// is a visibility of its own.
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	for i := range 100 {
		if err := b.UpsertRevision(&fleetgraph.Revision{
			Domain: "registry.example.com/team", Name: fmt.Sprintf("svc-%03d", i), Version: "1.0.0",
			Digest: fmt.Sprintf("sha256:%064x", i), Source: "kube", Scopes: []string{fmt.Sprint("ns-", i)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	full := b.Flush()
	first := full.Restrict(fleetgraph.OnlyScopes("ns-0"))
	for i := 1; i < 100; i++ {
		full.Restrict(fleetgraph.OnlyScopes("ns-0", fmt.Sprint("ns-", i)))
	}
	if again := full.Restrict(fleetgraph.OnlyScopes("ns-0")); again == first {
		t.Error("the least recently used view survived 99 newer ones")
	} else if diff := cmp.Diff(answers(t, first, nil), answers(t, again, nil)); diff != "" {
		t.Errorf("a rebuilt view answers differently:\n%s", diff)
	}
	if !strings.HasPrefix(full.ID(), "snap-") {
		t.Errorf("id %q", full.ID())
	}
}

// TestRestrictSharesViewsAcrossEmptyScopes: readers whose namespaces
// differ only in namespaces holding nothing in the snapshot (no record,
// no limitation) get the same view, built once; a limitation is a
// holding too.
func TestRestrictSharesViewsAcrossEmptyScopes(t *testing.T) {
	f := newScopedFleet(4, 20)
	full := f.build(t, fleetgraph.AllScopes())
	a := full.Restrict(fleetgraph.OnlyScopes("a"))
	for _, v := range []fleetgraph.Visibility{
		fleetgraph.OnlyScopes("a", "empty-1"),
		fleetgraph.OnlyScopes("empty-2", "a", "empty-3"),
	} {
		if got := full.Restrict(v); got != a {
			t.Errorf("Restrict(%v) built a view of its own; want the one of [a]", v.Scopes())
		}
	}
	if diff := cmp.Diff(answers(t, f.build(t, fleetgraph.OnlyScopes("a")), nil), answers(t, a, nil)); diff != "" {
		t.Errorf("the shared view differs from a fleet of a's records:\n%s", diff)
	}
	// b holds a limitation and records: seeing it is not the same view.
	if full.Restrict(fleetgraph.OnlyScopes("a", "b")) == a {
		t.Error("a reader of a and b shares the view of a")
	}
}

// TestRestrictHidesLimitationsOfEmptyScopes: a reader who sees every
// namespace that holds records still does not see a limitation about a
// namespace it may not see (a watch failing there), so it does not get
// the unrestricted snapshot.
func TestRestrictHidesLimitationsOfEmptyScopes(t *testing.T) {
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	if err := b.UpsertRevision(&fleetgraph.Revision{
		Domain: "registry.example.com/team", Name: "orders", Version: "1.0.0",
		Digest: fmt.Sprintf("sha256:%064x", 1), Source: "kube", Scopes: []string{"shop"},
	}); err != nil {
		t.Fatal(err)
	}
	b.SetSource(fleetgraph.SourceState{ID: "kube", Kind: "kubernetes", Status: fleetgraph.SourceAvailable, LastSuccessfulSync: testAsOf},
		fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Message: "servicecontracts could not be watched in secret-team", Source: "kube", Subject: "servicecontracts", Scope: "secret-team"})
	full := b.Flush()
	// The authorizer is asked about the namespace of the limitation too,
	// so a reader allowed there sees it.
	if diff := cmp.Diff([]string{"secret-team", "shop"}, full.Scopes()); diff != "" {
		t.Errorf("Scopes (-want +got):\n%s", diff)
	}
	view := full.Restrict(fleetgraph.OnlyScopes("shop"))
	if view == full {
		t.Fatal("a reader of shop alone got the unrestricted snapshot")
	}
	res, err := view.Search(fleetgraph.SearchQuery{})
	if err != nil {
		t.Fatal(err)
	}
	raw := normalized(t, res)
	if strings.Contains(raw, "secret-team") || !strings.Contains(raw, "orders") {
		t.Errorf("shop's reader: %s; want orders and nothing of secret-team", raw)
	}
	if all := full.Restrict(fleetgraph.OnlyScopes("shop", "secret-team")); all != full {
		t.Error("a reader of every scope there is did not get the snapshot itself")
	}
}

// TestRestrictAcrossChanges: views read on one snapshot are carried into
// the next by applying the change batch to them; after every batch of
// random changes — records moving between namespaces, deleted, re-added,
// statuses changing — each carried view still equals the fleet of its
// visible records.
func TestRestrictAcrossChanges(t *testing.T) {
	f := newScopedFleet(5, 40)
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }, Freshness: 24 * time.Hour})
	revs, tgts := map[string]*fleetgraph.Revision{}, map[string]*fleetgraph.Target{}
	for _, r := range f.revs {
		revs[r.Key()] = r
		if err := b.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range f.tgts {
		tgts[tg.Key()] = tg
		if err := b.UpsertTarget(tg); err != nil {
			t.Fatal(err)
		}
	}
	b.SetSource(f.src, f.lims...)
	b.Flush()
	vis := []fleetgraph.Visibility{fleetgraph.OnlyScopes("a"), fleetgraph.OnlyScopes("b", "c"), fleetgraph.OnlyScopes("a", "b", "c")}
	rng := rand.New(rand.NewPCG(5, 5))
	scopes := []string{"a", "b", "c", ""}
	for round := range 12 {
		for _, v := range vis {
			b.Current().Restrict(v) // read: the next snapshot carries it
		}
		for range 1 + rng.IntN(8) {
			switch rng.IntN(5) {
			case 0: // a revision's publishers change (or it leaves every namespace)
				r := *f.revs[rng.IntN(len(f.revs))]
				r.Scopes = publishers(rng)
				revs[r.Key()] = &r
				if err := b.UpsertRevision(&r); err != nil {
					t.Fatal(err)
				}
			case 1: // a revision is deleted
				r := f.revs[rng.IntN(len(f.revs))]
				delete(revs, r.Key())
				b.DeleteRevision(r.Key())
			case 2: // a target moves or changes status
				tg := *f.tgts[rng.IntN(len(f.tgts))]
				tg.Scope = scopes[rng.IntN(3)]
				tg.Compliance = fleetgraph.Statuses()[rng.IntN(5)]
				tgts[tg.Key()] = &tg
				if err := b.UpsertTarget(&tg); err != nil {
					t.Fatal(err)
				}
			case 3: // a target is deleted
				tg := f.tgts[rng.IntN(len(f.tgts))]
				for k, cur := range tgts {
					if cur.Name == tg.Name {
						delete(tgts, k)
						b.DeleteTarget(k)
					}
				}
			case 4: // a new service appears in some namespace
				r := &fleetgraph.Revision{Domain: "registry.example.com/team", Name: fmt.Sprintf("new-%d", round), Version: "1.0.0",
					Digest: fmt.Sprintf("sha256:%064d", round), Source: "kube", Scopes: []string{scopes[rng.IntN(3)]},
					Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: "svc-001", Ref: "oci://registry.example.com/team/svc-001"}}}
				revs[r.Key()] = r
				if err := b.UpsertRevision(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		cur := b.Flush()
		now := scopedFleet{src: f.src, lims: f.lims}
		for _, r := range revs {
			now.revs = append(now.revs, r)
		}
		for _, tg := range tgts {
			now.tgts = append(now.tgts, tg)
		}
		for _, v := range vis {
			view := cur.Restrict(v)
			if err := view.CheckInvariants(); err != nil {
				t.Fatalf("round %d, view %v: %v", round, v.Scopes(), err)
			}
			if diff := cmp.Diff(answers(t, now.build(t, v), nil), answers(t, view, nil)); diff != "" {
				t.Fatalf("round %d, view %v: the carried view differs from the fleet of its visible records (-want +got):\n%s", round, v.Scopes(), diff)
			}
		}
	}
}

// TestRevisionPublishedInSeveralScopes: one digest published from two
// namespaces is one revision carrying both scopes, sorted and distinct; a
// reader of either namespace sees it and only its own namespace on it, a
// reader of neither does not; when one publisher goes the revision stays
// for the other's namespace only, and it is gone with the last.
func TestRevisionPublishedInSeveralScopes(t *testing.T) {
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	r := &fleetgraph.Revision{Domain: "registry.example.com/team", Name: "pay", Version: "1.0.0",
		Digest: "sha256:" + strings.Repeat("a", 64), Source: "kube", Scopes: []string{"b", "a", "", "b"}}
	if err := b.UpsertRevision(r); err != nil {
		t.Fatal(err)
	}
	b.SetSource(fleetgraph.SourceState{ID: "kube", Kind: "kubernetes", Status: fleetgraph.SourceAvailable, LastSuccessfulSync: testAsOf})
	sk := r.ServiceKey()
	// seen returns the scopes the revision shows in s, nil when s does not
	// hold it, after checking s's invariants.
	seen := func(s *fleetgraph.Snapshot) []string {
		t.Helper()
		if err := s.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		res, err := s.Get(fleetgraph.GetQuery{Service: sk})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found {
			if _, revs, _ := s.Counts(); revs != 0 {
				t.Fatalf("the service is not found but the snapshot counts %d revisions", revs)
			}
			return nil
		}
		if len(res.Revisions) != 1 {
			t.Fatalf("%d revisions, want 1", len(res.Revisions))
		}
		return res.Revisions[0].Scopes
	}
	a, bb, c, ab := fleetgraph.OnlyScopes("a"), fleetgraph.OnlyScopes("b"), fleetgraph.OnlyScopes("c"), fleetgraph.OnlyScopes("a", "b")
	type want struct {
		v    fleetgraph.Visibility
		name string
		sees []string
	}
	check := func(step string, s *fleetgraph.Snapshot, wants []want) {
		t.Helper()
		for _, w := range wants {
			if diff := cmp.Diff(w.sees, seen(s.Restrict(w.v))); diff != "" {
				t.Errorf("%s, reader of %s: revision scopes (-want +got):\n%s", step, w.name, diff)
			}
		}
	}

	s := b.Flush()
	check("published from a and b", s, []want{
		{fleetgraph.AllScopes(), "everything", []string{"a", "b"}}, {a, "a", []string{"a"}}, {bb, "b", []string{"b"}},
		{c, "c", nil}, {ab, "a and b", []string{"a", "b"}},
	})
	if diff := cmp.Diff([]string{"a", "b"}, s.Scopes()); diff != "" {
		t.Errorf("snapshot scopes (-want +got):\n%s", diff)
	}

	// The publisher in a goes: the revision stays for b only.
	r2 := *r
	r2.Scopes = []string{"b"}
	if err := b.UpsertRevision(&r2); err != nil {
		t.Fatal(err)
	}
	s = b.Flush()
	check("published from b only", s, []want{
		{fleetgraph.AllScopes(), "everything", []string{"b"}}, {a, "a", nil}, {bb, "b", []string{"b"}}, {ab, "a and b", []string{"b"}},
	})

	// The last publisher goes.
	b.DeleteRevision(r.Key())
	s = b.Flush()
	check("no publisher", s, []want{{fleetgraph.AllScopes(), "everything", nil}, {bb, "b", nil}})
	if got := s.Scopes(); len(got) != 0 {
		t.Errorf("snapshot scopes after the last publisher went: %v", got)
	}
}
