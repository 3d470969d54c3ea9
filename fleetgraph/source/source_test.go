package source_test

// Tests of the sources themselves: target-state decoding, the directory
// scan, the impact ref loader's confinement and how a Feed reports
// sources. They read the core's fixtures in ../testdata; the core's own
// tests (package fleetgraph) use sources only to load those fixtures.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/test/pactocompat"
)

func TestTargetStateFixture(t *testing.T) {
	head := "schemaVersion: pacto.dev/fleet-targets/v1\n"
	tests := []struct {
		name, in, wantErr string
		wantTargets       int
	}{
		{"fixture", "", "", 6},
		{"unknown field", head + "targets:\n  - {service: a, name: b, colour: red}\n", "field colour not found", 0},
		{"schema", "schemaVersion: v0\ntargets: []\n", "want pacto.dev/fleet-targets/v1", 0},
		{"missing name", head + "targets:\n  - {service: a}\n", "targets[0]: service and name are required", 0},
		{"bad compliance", head + "targets:\n  - {service: a, name: b, compliance: Fine}\n", "targets[0].compliance", 0},
		{"two documents", head + "targets: []\n---\n" + head, "exactly one YAML document", 0},
		{"syntax", head + "targets: [\n", "line", 0},
		{"finding without code", head + "targets:\n  - {service: a, name: b, findings: [{message: m}]}\n", "findings[0]: code is required", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			if tt.in == "" {
				var err error
				if in, err = os.ReadFile("../testdata/targets.yaml"); err != nil {
					t.Fatal(err)
				}
			}
			got, _, err := source.DecodeTargetState(in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.wantTargets {
				t.Errorf("got %d targets, %v; want %d", len(got), err, tt.wantTargets)
			}
		})
	}
}

// TestTargetStatePactoDemo decodes Pacto's own demo target-state file
// (the optional compatibility data; skipped without it).
func TestTargetStatePactoDemo(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(pactocompat.Demo(t), "fleet-targets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := source.DecodeTargetState(in)
	if err != nil || len(got) != 4 {
		t.Errorf("got %d targets, %v; want Pacto's 4", len(got), err)
	}
}

func TestBrokenFixtureSurfacesItsError(t *testing.T) {
	b := fleetgraph.NewBuilder(nil)
	s := source.NewFeed(b, []source.Source{&source.TargetStateSource{Path: "../testdata/golden/search-all.json"}}).Collect(t.Context(), nil)
	src := s.Sources()
	if len(src) != 1 || src[0].Status != fleetgraph.SourceUnavailable || src[0].Error == nil || src[0].Error.Code != fleetgraph.ErrInvalid {
		t.Fatalf("sources = %+v, want one unavailable with code %s", src, fleetgraph.ErrInvalid)
	}
	if m := s.Meta(); m.Completeness != fleetgraph.CompletenessPartial || m.Limitations[0].Code != fleetgraph.LimitSourceUnavailable {
		t.Errorf("meta = %+v", m)
	}
}

func TestScanSkipsHiddenAndVendor(t *testing.T) {
	got, gaps, err := source.ScanDir("../testdata/bundles", 0)
	if err != nil || len(gaps) != 0 {
		t.Fatal(err, gaps)
	}
	want := []string{"../testdata/bundles/billing", "../testdata/bundles/ledger", "../testdata/bundles/ledger-hotfix"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("ScanDir (-got +want):\n%s", diff)
	}
	if got, _, _ := source.ScanDir("../testdata", 1); len(got) != 0 {
		t.Errorf("depth 1 found %v", got)
	}
}

func TestRefLoaderConfinesLocalPaths(t *testing.T) {
	l := source.NewRefLoader(&source.RefLoaderOptions{Workspace: "../testdata"})
	if _, err := l.Load(t.Context(), "impact/payments-v4"); err != nil {
		t.Errorf("inside the workspace: %v", err)
	}
	for _, ref := range []string{"../../examples/bundles/payments", "/etc", "oci://registry.example.com/x/y:1"} {
		var re *source.RefError
		if _, err := l.Load(t.Context(), ref); !errors.As(err, &re) {
			t.Errorf("%s: %v, want a RefError", ref, err)
		}
	}
	// A path outside is refused as outside whether or not it exists: the
	// answer must not tell an agent what exists beyond the workspace.
	for _, ref := range []string{"../../examples/bundles/payments", "../no-such-dir", "/no/such/dir", "/etc"} {
		var re *source.RefError
		if _, err := l.Load(t.Context(), ref); !errors.As(err, &re) || re.Code != source.CodeOutsideWorkspace {
			t.Errorf("%s: %v, want %s", ref, err, source.CodeOutsideWorkspace)
		}
	}
}

// fakeSource is a source with a fixed id and answer.
type fakeSource struct {
	id  string
	c   *source.Collection
	err error
}

func (f *fakeSource) ID() string   { return f.id }
func (f *fakeSource) Kind() string { return "fake" }
func (f *fakeSource) Collect(context.Context) (*source.Collection, error) {
	if f.err != nil {
		return nil, f.err
	}
	c := *f.c
	c.Revisions = nil
	for _, r := range f.c.Revisions {
		rc := *r
		c.Revisions = append(c.Revisions, &rc)
	}
	return &c, nil
}

// Two sources with one id (the same --local directory given twice, two
// target-state files with one base name) are one entry in the envelope,
// with a DUPLICATE_SOURCE_ID limitation; the entry is the least available
// of them, so an unavailable source is never hidden behind a duplicate,
// whichever order they come in.
func TestDuplicateSourceIDs(t *testing.T) {
	up := &fakeSource{id: "dup", c: &source.Collection{Revisions: []*fleetgraph.Revision{{Name: "svc", Version: "1.0.0", Digest: "sha256:01"}}}}
	down := &fakeSource{id: "dup", err: fs.ErrPermission}
	type entry struct {
		ID, Status, Error string
		Revisions         int
		Codes             []string
	}
	view := func(s *fleetgraph.Snapshot) entry {
		srcs := s.Sources()
		if len(srcs) != 1 {
			t.Fatalf("sources %+v, want one entry", srcs)
		}
		e := entry{ID: srcs[0].ID, Status: srcs[0].Status, Revisions: srcs[0].RevisionCount}
		if srcs[0].Error != nil {
			e.Error = srcs[0].Error.Code
		}
		for _, l := range s.Meta().Limitations {
			e.Codes = append(e.Codes, l.Code)
		}
		return e
	}
	for _, tc := range []struct {
		name    string
		sources []source.Source
		want    entry
	}{{
		name:    "same directory twice",
		sources: []source.Source{&source.LocalSource{Dir: "../testdata/bundles"}, &source.LocalSource{Dir: "../testdata/bundles"}},
		want:    entry{ID: "local:../testdata/bundles", Status: fleetgraph.SourceAvailable, Revisions: 3, Codes: []string{fleetgraph.LimitDuplicateSourceID}},
	}, {
		name:    "unavailable first",
		sources: []source.Source{down, up},
		want:    entry{ID: "dup", Status: fleetgraph.SourceUnavailable, Error: fleetgraph.ErrAuthFailed, Revisions: 1, Codes: []string{fleetgraph.LimitSourceUnavailable, fleetgraph.LimitDuplicateSourceID}},
	}, {
		name:    "unavailable last",
		sources: []source.Source{up, down},
		want:    entry{ID: "dup", Status: fleetgraph.SourceUnavailable, Error: fleetgraph.ErrAuthFailed, Revisions: 1, Codes: []string{fleetgraph.LimitSourceUnavailable, fleetgraph.LimitDuplicateSourceID}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := source.NewFeed(fleetgraph.NewBuilder(nil), tc.sources).Collect(t.Context(), nil)
			if diff := cmp.Diff(view(s), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
	// The order of the duplicates does not change the snapshot.
	a := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{down, up}).Collect(t.Context(), nil)
	b := source.NewFeed(fleetgraph.NewBuilder(nil), []source.Source{up, down}).Collect(t.Context(), nil)
	if a.ID() != b.ID() {
		t.Errorf("snapshot ids %s and %s differ with the order of duplicate sources", a.ID(), b.ID())
	}
}
