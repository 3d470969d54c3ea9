package fleetgraph_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/test/pactocompat"
)

// TestLocate finds where a revision's bundle can be read again and which
// targets run it, over the example bundles and their targets.
func TestLocate(t *testing.T) {
	snap := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.TargetStateSource{Path: "../examples/fleet/targets.yaml"},
	}).Collect(t.Context(), nil)
	dir, err := filepath.Abs("../examples/bundles/payments")
	if err != nil {
		t.Fatal(err)
	}
	got, miss := snap.Locate(fleetgraph.LocateQuery{Service: "payments", Targets: true})
	if !miss.Found || len(got) != 1 {
		t.Fatalf("%+v %+v", got, miss)
	}
	if got[0].Location != dir || got[0].Version != "3.0.2" {
		t.Errorf("got %+v, want version 3.0.2 at %s", got[0], dir)
	}
	if diff := cmp.Diff([]string{fleetgraph.TargetKey("production", "kubernetes-workload", "shop/payments")}, got[0].Targets); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if _, miss := snap.Locate(fleetgraph.LocateQuery{Service: "payments", Version: "9.9.9"}); miss.Found || len(miss.Candidates) != 1 || miss.Candidates[0] != "3.0.2" {
		t.Errorf("version miss: %+v", miss)
	}
	if _, miss := snap.Locate(fleetgraph.LocateQuery{Service: "paymnts"}); miss.Found || len(miss.Candidates) == 0 {
		t.Errorf("service miss: %+v", miss)
	}
}

// TestLocateNewestFirst: several revisions of one service, newest
// semantic version first — not the directories' order, in which 1.10.0
// comes before 1.2.0 and a release candidate after its release.
func TestLocateNewestFirst(t *testing.T) {
	locateNewestFirst(t, "testdata/versions/journal", "journal", []string{"2.0.0", "2.0.0-rc.1", "1.10.0", "1.9.0", "1.2.0", "0.9.0"})
}

// TestLocateNewestFirstPactoDemo: the same over Pacto's demo bundles (the
// optional compatibility data; skipped without it).
func TestLocateNewestFirstPactoDemo(t *testing.T) {
	locateNewestFirst(t, filepath.Join(pactocompat.Demo(t), "bundles", "payments-service"), "payments-service",
		[]string{"2.1.1", "2.1.0", "2.0.1", "2.0.0", "1.2.1", "1.2.0", "1.1.0", "1.0.0"})
}

func locateNewestFirst(t *testing.T, dir, service string, want []string) {
	t.Helper()
	snap := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{&source.LocalSource{Dir: dir}}).Collect(t.Context(), nil)
	got, miss := snap.Locate(fleetgraph.LocateQuery{Service: service})
	if !miss.Found {
		t.Fatalf("%+v", miss)
	}
	var versions []string
	for _, r := range got {
		versions = append(versions, r.Version)
		if r.Location == "" {
			t.Errorf("%s has no location", r.Key)
		}
	}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// BenchmarkLocate: finding a revision's bundle for a payload check costs
// nothing per target; naming the targets that run it (explain's setBy)
// costs a link per target. One service with 10,000 targets, side by side.
func BenchmarkLocate(b *testing.B) {
	fb := fleetgraph.NewBuilder(nil)
	if err := fb.UpsertRevision(&fleetgraph.Revision{Name: "svc", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64), Source: "bench", Location: "/bundles/svc"}); err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		if err := fb.UpsertTarget(&fleetgraph.Target{Scope: "prod", Kind: "kubernetes-workload", Name: fmt.Sprintf("ns/svc-%d", i), Service: "svc", RequestedRef: "svc:1.0.0", Source: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	snap := fb.Flush()
	for _, q := range []fleetgraph.LocateQuery{{Service: "svc"}, {Service: "svc", Targets: true}} {
		b.Run(fmt.Sprintf("targets=%v", q.Targets), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, miss := snap.Locate(q); !miss.Found || (q.Targets && len(got[0].Targets) != 10_000) {
					b.Fatalf("%+v %+v", got, miss)
				}
			}
		})
	}
}

// TestLocateFromResolvedRef: a revision whose source records no location
// (the cluster feed projects revisions from ServiceContract status) is
// read again by its resolved reference when that pins its digest, and by
// nothing otherwise.
func TestLocateFromResolvedRef(t *testing.T) {
	d := "sha256:" + strings.Repeat("b", 64)
	fb := fleetgraph.NewBuilder(nil)
	for _, r := range []*fleetgraph.Revision{
		{Name: "pinned", Version: "1.0.0", Digest: d, ResolvedRef: "oci://reg.example/team/pinned@" + d, Source: "k8s"},
		{Name: "tagged", Version: "1.0.0", Digest: d, ResolvedRef: "oci://reg.example/team/tagged:1.0.0", Source: "k8s"},
	} {
		if err := fb.UpsertRevision(r); err != nil {
			t.Fatal(err)
		}
	}
	snap := fb.Flush()
	for service, want := range map[string]string{"pinned": "oci://reg.example/team/pinned@" + d, "tagged": ""} {
		got, miss := snap.Locate(fleetgraph.LocateQuery{Service: service})
		if !miss.Found || got[0].Location != want {
			t.Errorf("%s: %+v %+v, want location %q", service, got, miss, want)
		}
	}
}
