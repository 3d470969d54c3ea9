package fleetgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// statusScan is the Status of before the attention lists: it derives
// every item from the records per query. The indexed Status must agree.
func (s *Snapshot) statusScan(q StatusQuery) (*StatusResult, error) {
	if q.Limit < 0 || q.Limit > MaxStatusLimit {
		return nil, invalid("limit", "limit %d: want 1..%d", q.Limit, MaxStatusLimit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultStatusLimit
	}
	cats := q.categories()
	filter := filterHash(cats)
	offset := 0
	if q.Cursor != "" {
		c, err := s.checkCursor(q.Cursor, filter)
		if err != nil {
			return nil, err
		}
		offset = c.Offset
	}
	on := func(c string) bool { return slices.Contains(cats, c) }
	var items []StatusItem
	if on(CategoryNonCompliant) || on(CategoryUnknown) || on(CategoryStale) {
		for k, e := range s.targets.all() {
			t := e.Target
			sk := t.ServiceKey()
			switch t.compliance() {
			case StatusNonCompliant:
				if on(CategoryNonCompliant) {
					items = append(items, StatusItem{Kind: "target", Name: k, Service: sk, Code: CodeNonCompliant, Reason: firstFinding(t, "evidence shows the target does not meet its contract")})
				}
			case StatusUnknown:
				if on(CategoryUnknown) {
					items = append(items, StatusItem{Kind: "target", Name: k, Service: sk, Code: CodeUnknown, Reason: unknownReason(t)})
				}
			}
			if on(CategoryStale) && s.stale(t) {
				items = append(items, StatusItem{Kind: "target", Name: k, Service: sk, Code: CodeStaleEvidence,
					Reason: "evidence from " + t.EvidenceAt.UTC().Format(time.RFC3339) + " is older than the freshness window " + s.freshness.String()})
			}
		}
	}
	if on(CategoryInvalid) || on(CategoryMissingReadiness) || on(CategoryUnresolvedDeps) {
		for k, e := range s.revisions.all() {
			r := e.Revision
			sk := r.ServiceKey()
			if on(CategoryInvalid) && r.Valid != nil && !*r.Valid {
				items = append(items, StatusItem{Kind: "revision", Name: k, Service: sk, Code: CodeInvalidContract, Reason: revisionFindings(r)})
			}
			if on(CategoryMissingReadiness) && r.Readiness == nil {
				items = append(items, StatusItem{Kind: "revision", Name: k, Service: sk, Code: CodeMissingReadiness, Reason: "the contract declares no readiness"})
			}
			if on(CategoryUnresolvedDeps) {
				for _, edge := range r.Edges {
					if rel := s.resolve(r, edge); !rel.Resolved {
						items = append(items, StatusItem{Kind: "relationship", Name: k + " → " + edge.Ref, Service: sk, Code: CodeUnresolvedDep, Reason: rel.Reason})
					}
				}
			}
		}
	}
	slices.SortFunc(items, func(a, b StatusItem) int {
		if c := strings.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	res := &StatusResult{Meta: s.meta(nil), Categories: cats, Total: len(items), Items: []StatusItem{}}
	if offset < len(items) {
		end := min(len(items), offset+limit)
		res.Items = append(res.Items, items[offset:end]...)
		if end < len(items) {
			res.Truncated = true
			res.NextCursor = encodeCursor(cursor{Snapshot: s.id, Filter: filter, Offset: end})
		}
	}
	res.Count = len(res.Items)
	return res, nil
}

// searchScan is the search of before the posting lists: every service
// is checked with the matcher. It returns every matching key, in order.
func (s *Snapshot) searchScan(q SearchQuery) ([]string, error) {
	labels, err := q.check()
	if err != nil {
		return nil, err
	}
	m := matcher{s: s, q: &q, labels: labels, text: strings.ToLower(q.Text)}
	var out []string
	for k := range s.order.all() {
		if m.match(s.service(k)) {
			out = append(out, k)
		}
	}
	return out, nil
}

// indexFleet is a small fleet with every shape the indexes must follow:
// several revisions per service, owners differing in case, unresolved and
// digest-pinned edges, readiness, invalid revisions, labels and scopes.
type indexFleet struct {
	rng  *rand.Rand
	revs map[string]*Revision
	tgts map[string]*Target
}

const indexServices = 60

func (f *indexFleet) revision() *Revision {
	i := f.rng.IntN(indexServices)
	r := &Revision{
		Domain: []string{"", "reg.example/a", "reg.example/b"}[i%3], Name: fmt.Sprintf("svc-%02d", i),
		Version: fmt.Sprintf("1.%d.0", f.rng.IntN(3)), Digest: fmt.Sprintf("sha256:%02d%02d", i, f.rng.IntN(4)),
		Owner: []string{"", "Team-A", "team-a", "team-b", "TEAM-K"}[f.rng.IntN(5)], Workload: []string{"", "service", "job"}[f.rng.IntN(3)],
		Source: []string{"s1", "s2"}[f.rng.IntN(2)],
	}
	if f.rng.IntN(2) == 0 {
		r.Capabilities = []string{"health"}
	}
	if f.rng.IntN(3) == 0 {
		r.Readiness = &Readiness{Score: f.rng.IntN(100), MinScore: 50, Expires: []string{"2099-01-01", "2020-01-01"}[f.rng.IntN(2)]}
	}
	if f.rng.IntN(4) == 0 {
		ok := f.rng.IntN(2) == 0
		r.Valid = &ok
		r.Findings = []Finding{{Code: "X", Message: "bad"}}
	}
	for range f.rng.IntN(4) {
		j := f.rng.IntN(indexServices + 10) // some names are never in the fleet
		e := Edge{Type: []string{EdgeDependency, EdgeDependency, EdgeConfiguration}[f.rng.IntN(3)], Name: fmt.Sprintf("svc-%02d", j), Ref: fmt.Sprintf("svc-%02d", j)}
		switch f.rng.IntN(4) {
		case 0:
			e.Ref = fmt.Sprintf("oci://reg.example/a/svc-%02d@sha256:%02d%02d", j, j, f.rng.IntN(4))
		case 1:
			e.Ref = fmt.Sprintf("oci://reg.example/b/svc-%02d:1.0.0", j)
		}
		if f.rng.IntN(3) == 0 {
			// A renamed dependency: its alias may or may not name a
			// service, and the reference wins when it names one.
			e.Name = fmt.Sprintf("svc-%02d", f.rng.IntN(indexServices+10))
		}
		r.Edges = append(r.Edges, e)
	}
	return r
}

func (f *indexFleet) target() *Target {
	i := f.rng.IntN(indexServices)
	t := &Target{
		Scope: fmt.Sprintf("c%d", f.rng.IntN(3)), Kind: "k", Name: fmt.Sprintf("t-%02d-%d", i, f.rng.IntN(3)), Service: fmt.Sprintf("svc-%02d", i),
		Domain: []string{"", "reg.example/a", "reg.example/b"}[i%3], ResolvedRef: fmt.Sprintf("svc-%02d:1.%d.0", i, f.rng.IntN(3)),
		Compliance: Statuses()[f.rng.IntN(len(Statuses()))], Source: "s1",
		Labels: map[string]string{"env": []string{"prod", "dev"}[f.rng.IntN(2)]},
	}
	if f.rng.IntN(2) == 0 {
		t.Labels["tier"] = "web"
	}
	if f.rng.IntN(4) != 0 {
		t.EvidenceAt = time.Date(2026, 7, 1+f.rng.IntN(31), 0, 0, 0, 0, time.UTC)
	}
	if f.rng.IntN(5) == 0 {
		t.Findings = []Finding{{Code: "F", Message: "failed"}}
	}
	return t
}

// change applies one random upsert or delete to the Builder and the mirror.
func (f *indexFleet) change(t *testing.T, b *Builder) {
	switch f.rng.IntN(5) {
	case 0, 1:
		r := f.revision()
		f.revs[r.Key()] = r
		if err := b.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	case 2, 3:
		tg := f.target()
		f.tgts[tg.Key()] = tg
		if err := b.UpsertTarget(tg); err != nil {
			t.Fatal(err)
		}
	default:
		if f.rng.IntN(2) == 0 && len(f.revs) > 0 {
			k := slices.Sorted(mapKeys(f.revs))[f.rng.IntN(len(f.revs))]
			delete(f.revs, k)
			b.DeleteRevision(k)
		} else if len(f.tgts) > 0 {
			k := slices.Sorted(mapKeys(f.tgts))[f.rng.IntN(len(f.tgts))]
			delete(f.tgts, k)
			b.DeleteTarget(k)
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func indexQueries() []SearchQuery {
	var qs []SearchQuery
	for _, q := range []SearchQuery{
		{}, {Text: "svc-1"}, {Text: "TEAM-A"}, {Text: "K"}, {Text: "nothing"}, {Owner: "team-a"}, {Owner: "team-k"}, {Owner: "nobody"},
		{Status: StatusNonCompliant}, {Status: StatusNotEvaluated}, {Source: "s2"}, {Workload: "job"}, {HasCapability: "health"},
		{HasDependency: "svc-03"}, {HasDependency: "reg.example%2Fa/svc-04"}, {HasDependency: "svc-65"}, {Ready: true}, {NotReady: true},
		{Compliance: StatusUnknown}, {Scope: "c1"}, {Labels: "env=prod"}, {Labels: "tier"}, {Labels: "env=prod,tier"}, {Labels: "env=qa"},
		{Compliance: StatusNonCompliant, Labels: "env=prod"}, {Compliance: StatusCompliant, Scope: "c2", Ready: true},
		{Workload: "service", HasCapability: "health"}, {Workload: "service", HasDependency: "svc-07", Owner: "TEAM-B"},
		{Text: "svc-2", Status: StatusWarning, Labels: "env=dev"}, {Scope: "c0", NotReady: true, Source: "s1"},
	} {
		q.Limit = 7
		qs = append(qs, q)
	}
	return qs
}

// TestIndexedQueriesAgreeWithScans drives a Builder through random
// batches and checks, after each, that search and status answer exactly
// what a scan of the records answers: the posting and attention lists
// followed every change.
func TestIndexedQueriesAgreeWithScans(t *testing.T) {
	clock := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	b := NewBuilder(&BuilderOptions{Freshness: 10 * 24 * time.Hour, Clock: func() time.Time { return clock }})
	f := &indexFleet{rng: rand.New(rand.NewPCG(7, 9)), revs: map[string]*Revision{}, tgts: map[string]*Target{}}
	for round := range 40 {
		for range 1 + f.rng.IntN(30) {
			f.change(t, b)
		}
		clock = clock.Add(time.Duration(f.rng.IntN(48)) * time.Hour)
		s := b.Flush()
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, q := range indexQueries() {
			want, err := s.searchScan(q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			page, cur := 0, ""
			for {
				pq := q
				pq.Cursor = cur
				res, err := s.Search(pq)
				if err != nil {
					t.Fatalf("round %d %+v: %v", round, q, err)
				}
				if res.Total != len(want) {
					t.Fatalf("round %d %+v page %d: total %d, want %d", round, q, page, res.Total, len(want))
				}
				for _, sv := range res.Services {
					got = append(got, sv.Key)
				}
				if !res.Truncated {
					break
				}
				cur, page = res.NextCursor, page+1
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Fatalf("round %d %+v: keys (-got +want):\n%s", round, q, diff)
			}
		}
		for _, q := range []StatusQuery{{}, {Stale: true}, {UnresolvedDeps: true, Invalid: true}, {Unknown: true, MissingReadiness: true, NonCompliant: true}} {
			q.Limit = MaxStatusLimit
			got, err := s.Status(q)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := s.statusScan(q)
			if !slices.IsSortedFunc(got.Items, byCodeName) {
				t.Fatalf("round %d %+v: items out of order", round, q)
			}
			sortItems := func(it []StatusItem) []StatusItem {
				it = slices.Clone(it)
				slices.SortStableFunc(it, func(a, b StatusItem) int {
					if c := byCodeName(a, b); c != 0 {
						return c
					}
					return strings.Compare(a.Reason, b.Reason)
				})
				return it
			}
			if diff := cmp.Diff(sortItems(got.Items), sortItems(want.Items)); diff != "" || got.Total != want.Total {
				t.Fatalf("round %d %+v: total %d want %d, items (-got +want):\n%s", round, q, got.Total, want.Total, diff)
			}
		}
	}
}

func byCodeName(a, b StatusItem) int {
	if c := strings.Compare(a.Code, b.Code); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// TestStatusPagesAcrossLists pages through status a few items at a time
// and gets the one-page listing back, across the attention lists.
func TestStatusPagesAcrossLists(t *testing.T) {
	clock := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	b := NewBuilder(&BuilderOptions{Freshness: 10 * 24 * time.Hour, Clock: func() time.Time { return clock }})
	f := &indexFleet{rng: rand.New(rand.NewPCG(3, 4)), revs: map[string]*Revision{}, tgts: map[string]*Target{}}
	for range 300 {
		f.change(t, b)
	}
	s := b.Flush()
	all, err := s.Status(StatusQuery{Limit: MaxStatusLimit})
	if err != nil {
		t.Fatal(err)
	}
	var got []StatusItem
	cur := ""
	for {
		res, err := s.Status(StatusQuery{Limit: 7, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != all.Total {
			t.Fatalf("total %d on a page, %d in one", res.Total, all.Total)
		}
		got = append(got, res.Items...)
		if !res.Truncated {
			break
		}
		cur = res.NextCursor
	}
	if diff := cmp.Diff(got, all.Items); diff != "" {
		t.Errorf("paged items (-got +want):\n%s", diff)
	}
}

// TestTextSearchAgreesWithScanAcrossChunks checks the text search, which
// reads each chunk's values as one concatenated string, against
// strings.Contains on each service's own text: over many chunks, through
// changes that copy some of them, with texts that occur only across two
// neighbouring services' texts (the end of one and the start of the
// next) or across the NUL between a name and its owners.
func TestTextSearchAgreesWithScanAcrossChunks(t *testing.T) {
	const n = 1500 // about ten chunks of the service order
	b := NewBuilder(nil)
	rng := rand.New(rand.NewPCG(3, 5))
	owners := []string{"", "Team-A", "team-b", "Ops", "zz", "Bass"}
	upsert := func(i int) {
		r := &Revision{Name: fmt.Sprintf("svc-%04d", i), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%04d", i),
			Owner: owners[rng.IntN(len(owners))], Source: "s1"}
		if err := b.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		upsert(i)
	}
	texts := []string{"", "svc-01", "SVC-0999", "9", "team", "a\x00", "0\x00team-b", "\x00",
		"4svc-", "asvc-0", "bsvc", "ops", "zzsvc", "0svc-0002", "-a", "nothing", "svc-1499\x00zz", "as", "ss", "sv"}
	for round := range 4 {
		s := b.Flush()
		for _, text := range texts {
			// Alone, and beside a filter the intersection seeks through.
			for _, q := range []SearchQuery{{Text: text}, {Text: text, Owner: "ops"}} {
				q.Limit = MaxSearchLimit
				want, err := s.searchScan(q)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for cur := ""; ; {
					pq := q
					pq.Cursor = cur
					res, err := s.Search(pq)
					if err != nil {
						t.Fatalf("round %d %+v: %v", round, q, err)
					}
					if res.Total != len(want) {
						t.Fatalf("round %d %+v: total %d, want %d", round, q, res.Total, len(want))
					}
					for _, sv := range res.Services {
						got = append(got, sv.Key)
					}
					if !res.Truncated {
						break
					}
					cur = res.NextCursor
				}
				if diff := cmp.Diff(got, want); diff != "" {
					t.Fatalf("round %d %+v: keys (-got +want):\n%s", round, q, diff)
				}
			}
		}
		for range 40 { // change a few services: their chunks are copied
			i := rng.IntN(n + 50)
			if rng.IntN(4) == 0 {
				b.DeleteRevision(RevisionKey(ServiceKey("", fmt.Sprintf("svc-%04d", i)), fmt.Sprintf("sha256:%04d", i)))
				continue
			}
			upsert(i)
		}
	}
}
