package fleetgraph_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// TestLocate finds where a revision's bundle can be read again and which
// targets run it, over the example bundles and their targets.
func TestLocate(t *testing.T) {
	snap := source.Populate(t.Context(), fleetgraph.NewBuilder(nil), []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.TargetStateSource{Path: "../examples/fleet/targets.yaml"},
	})
	dir, err := filepath.Abs("../examples/bundles/payments")
	if err != nil {
		t.Fatal(err)
	}
	got, miss := snap.Locate("payments", "")
	if !miss.Found || len(got) != 1 {
		t.Fatalf("%+v %+v", got, miss)
	}
	if got[0].Location != dir || got[0].Version != "3.0.2" {
		t.Errorf("got %+v, want version 3.0.2 at %s", got[0], dir)
	}
	if diff := cmp.Diff([]string{fleetgraph.TargetKey("production", "kubernetes-workload", "shop/payments")}, got[0].Targets); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if _, miss := snap.Locate("payments", "9.9.9"); miss.Found || len(miss.Candidates) != 1 || miss.Candidates[0] != "3.0.2" {
		t.Errorf("version miss: %+v", miss)
	}
	if _, miss := snap.Locate("paymnts", ""); miss.Found || len(miss.Candidates) == 0 {
		t.Errorf("service miss: %+v", miss)
	}
}

// TestLocateNewestFirst: several revisions of one service, newest
// semantic version first (Pacto's demo bundles).
func TestLocateNewestFirst(t *testing.T) {
	snap := source.Populate(t.Context(), fleetgraph.NewBuilder(nil), []source.Source{
		&source.LocalSource{Dir: "../../shared/compat/pacto-demo/bundles/payments-service"},
	})
	got, miss := snap.Locate("payments-service", "")
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
	want := []string{"2.1.1", "2.1.0", "2.0.1", "2.0.0", "1.2.1", "1.2.0", "1.1.0", "1.0.0"}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
