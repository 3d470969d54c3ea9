package source_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// fixedSource hands the Feed a fixed collection: the sub-step under test
// is the Feed's merge, so the collection is written out rather than read.
type fixedSource struct {
	id string
	c  source.Collection
}

func (f *fixedSource) ID() string   { return f.id }
func (f *fixedSource) Kind() string { return "fixed" }
func (f *fixedSource) Collect(context.Context) (*source.Collection, error) {
	c := f.c
	c.Revisions = nil
	for _, r := range f.c.Revisions {
		rr := *r
		c.Revisions = append(c.Revisions, &rr)
	}
	return &c, nil
}

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// TestDocumentConflict: two sources deliver one revision key with
// different documents. Both sources are partial, the answer carries
// REVISION_DOCUMENT_CONFLICT naming both, and the kept document does not
// depend on the order of the sources.
func TestDocumentConflict(t *testing.T) {
	a := &fixedSource{id: "a", c: source.Collection{Revisions: []*fleetgraph.Revision{{Name: "pay", Version: "1.0.0", Digest: digestA, Owner: "team-a"}}}}
	b := &fixedSource{id: "b", c: source.Collection{Revisions: []*fleetgraph.Revision{{Name: "pay", Version: "1.0.0", Digest: digestA, Owner: "team-b"}}}}
	var owners []string
	for _, order := range [][]source.Source{{a, b}, {b, a}} {
		snap := source.NewFeed(fleetgraph.NewBuilder(nil), order).Collect(t.Context(), nil)
		m := snap.Meta()
		if m.Completeness != fleetgraph.CompletenessPartial {
			t.Errorf("completeness %s, want partial", m.Completeness)
		}
		n := 0
		for _, l := range m.Limitations {
			if l.Code == fleetgraph.LimitRevisionDocumentConflict && strings.Contains(l.Message, "a, b") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("limitations %+v: want one REVISION_DOCUMENT_CONFLICT per source", m.Limitations)
		}
		for _, st := range m.Sources {
			if st.Status != fleetgraph.SourcePartial {
				t.Errorf("source %s is %s, want partial", st.ID, st.Status)
			}
		}
		res, err := snap.Get(fleetgraph.GetQuery{Service: "pay"})
		if err != nil || len(res.Revisions) != 1 {
			t.Fatalf("get pay: %v %+v", err, res)
		}
		owners = append(owners, res.Revisions[0].Owner)
	}
	if owners[0] != owners[1] {
		t.Errorf("kept owner %s with one order and %s with the other", owners[0], owners[1])
	}
	// The same document from both: no conflict, both available.
	c := &fixedSource{id: "c", c: a.c}
	m := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{a, c}).Collect(t.Context(), nil).Meta()
	if m.Completeness != fleetgraph.CompletenessComplete {
		t.Errorf("agreeing sources: completeness %s, limitations %+v", m.Completeness, m.Limitations)
	}
}

// TestDroppedRecordMakesSourcePartial: a record the Builder refuses (a
// revision without a digest) makes its source partial and the snapshot
// partial, not a complete snapshot with a limitation beside it.
func TestDroppedRecordMakesSourcePartial(t *testing.T) {
	s := &fixedSource{id: "s", c: source.Collection{Revisions: []*fleetgraph.Revision{
		{Name: "pay", Version: "1.0.0", Digest: digestA},
		{Name: "ledger", Version: "1.0.0"},
	}}}
	m := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{s}).Collect(t.Context(), nil).Meta()
	if m.Completeness != fleetgraph.CompletenessPartial || len(m.Sources) != 1 || m.Sources[0].Status != fleetgraph.SourcePartial {
		t.Fatalf("completeness %s, sources %+v: want partial", m.Completeness, m.Sources)
	}
	var codes []string
	for _, l := range m.Limitations {
		codes = append(codes, l.Code)
	}
	if got := strings.Join(codes, ","); !strings.Contains(got, fleetgraph.LimitIdentityUnresolved) || !strings.Contains(got, fleetgraph.LimitSourcePartial) {
		t.Errorf("limitation codes %s: want %s and %s", got, fleetgraph.LimitIdentityUnresolved, fleetgraph.LimitSourcePartial)
	}
}
