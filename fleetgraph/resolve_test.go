package fleetgraph_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
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
