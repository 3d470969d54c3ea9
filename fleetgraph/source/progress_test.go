package source_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// TestLocalSourceReportsProgress: Progress is called once for every bundle
// directory, the ones left out included, so a caller bounding stalls
// sees a directory of broken bundles move on too.
func TestLocalSourceReportsProgress(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "good"), os.DirFS("../testdata/bundles")); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "pacto.yaml"), []byte("service: [not, a, mapping\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs, _, err := source.ScanDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	src := &source.LocalSource{Dir: dir, Progress: func() { calls.Add(1) }}
	c, err := src.Collect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Revisions) == 0 || len(c.Revisions) == len(dirs) {
		t.Fatalf("%d of %d bundles loaded; the fixture needs good and broken ones", len(c.Revisions), len(dirs))
	}
	if got := calls.Load(); got != int64(len(dirs)) {
		t.Errorf("Progress called %d times for %d bundle directories", got, len(dirs))
	}
}

// TestLocalSourceEndsWithTheCause: a collection its caller ends returns
// the caller's reason, not a bare "context canceled", and the Feed marks
// the source unavailable with it.
func TestLocalSourceEndsWithTheCause(t *testing.T) {
	stalled := errors.New("stalled: no progress")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(stalled)
	src := &source.LocalSource{Dir: "../testdata/bundles"}
	if _, err := src.Collect(ctx); !errors.Is(err, stalled) {
		t.Fatalf("Collect on an ended context: %v, want the cause %v", err, stalled)
	}
	snap := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{src}).Collect(ctx, nil)
	sts := snap.Sources()
	if len(sts) != 1 || sts[0].Status != fleetgraph.SourceUnavailable || sts[0].Error == nil {
		t.Fatalf("sources after an ended collection: %+v", sts)
	}
}

// TestOCISourceReportsProgress: Progress is called once a reference,
// failed ones too (nothing listens on the loopback port named).
func TestOCISourceReportsProgress(t *testing.T) {
	var calls atomic.Int64
	refs := []string{"oci://127.0.0.1:1/team/a:1.0.0", "oci://127.0.0.1:1/team/b:1.0.0"}
	src := &source.OCISource{Refs: refs, Progress: func() { calls.Add(1) }}
	if _, err := src.Collect(t.Context()); err == nil {
		t.Fatal("every reference names a port nothing listens on, yet the source loaded")
	}
	if got := calls.Load(); got != int64(len(refs)) {
		t.Errorf("Progress called %d times for %d references", got, len(refs))
	}
}
