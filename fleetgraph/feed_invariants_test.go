package fleetgraph_test

import (
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// TestDuplicateSourcesKeepInvariants: two sources with one id (the same
// directory given twice, in either order, beside a missing one) make one
// envelope entry, and the snapshot's indexes still agree with its records.
// CheckInvariants is test-only (export_test.go), so the check of snapshots
// a source.Feed builds lives here rather than in package source's tests.
func TestDuplicateSourcesKeepInvariants(t *testing.T) {
	dir := "../examples/bundles"
	for _, sources := range [][]source.Source{
		{&source.LocalSource{Dir: dir}, &source.LocalSource{Dir: dir}},
		{&source.LocalSource{Dir: dir}, &source.TargetStateSource{Path: t.TempDir() + "/missing.yaml"}, &source.LocalSource{Dir: dir}},
	} {
		s := source.NewFeed(fleetgraph.NewBuilder(nil), sources).Collect(t.Context(), nil)
		if err := s.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if sv, _, _ := s.Counts(); sv == 0 {
			t.Errorf("no services from %s", dir)
		}
	}
}
