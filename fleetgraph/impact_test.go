package fleetgraph_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
)

// riskFleet is a fleet around one changed service, pay, with a consumer
// for every kind of exposure: a at risk (its range admits the new
// version), b without a range, c with a range that does not parse, d
// excluded (its range stops below); e depends on a, f on b, g on d only,
// and h on d (its shortest path) and on e (a longer one, through a).
func riskFleet(t *testing.T) *fleetgraph.Snapshot {
	t.Helper()
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	const domain = "registry.example.com/shop"
	dep := func(name, compat string) fleetgraph.Edge {
		return fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: name, Ref: "oci://" + domain + "/" + name, Required: true, Compatibility: compat}
	}
	revs := map[string][]fleetgraph.Edge{
		"pay": nil,
		"a":   {dep("pay", "^1.0.0")},
		"b":   {dep("pay", "")},
		"c":   {dep("pay", "one point oh")},
		"d":   {dep("pay", "~1.0.0")},
		"e":   {dep("a", "^1.0.0")},
		"f":   {dep("b", "^1.0.0")},
		"g":   {dep("d", "^1.0.0")},
		"h":   {dep("d", "^1.0.0"), dep("e", "^1.0.0")},
	}
	i := 0
	for name, edges := range revs {
		i++
		if err := b.UpsertRevision(&fleetgraph.Revision{Domain: domain, Name: name, Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", i), Source: "test", Edges: edges}); err != nil {
			t.Fatal(err)
		}
	}
	return b.Flush()
}

// payBundle writes a revision of pay at version: GET /payments, and
// with refunds POST /refunds too, with more GET /report too.
func payBundle(t testing.TB, version string, refunds bool, more ...bool) *bundle.Bundle {
	t.Helper()
	dir := t.TempDir()
	api := "openapi: 3.1.0\ninfo: {title: Pay, version: " + version + "}\npaths:\n  /payments:\n    get:\n      responses: {\"200\": {description: ok}}\n"
	if refunds {
		api += "  /refunds:\n    post:\n      responses: {\"201\": {description: ok}}\n"
	}
	if len(more) > 0 && more[0] {
		api += "  /report:\n    get:\n      responses: {\"200\": {description: ok}}\n"
	}
	files := map[string]string{
		"pacto.yaml":   "pactoVersion: \"2.0\"\nservice:\n  name: pay\n  version: " + version + "\ninterfaces:\n  - {name: http, type: openapi, ref: openapi.yaml}\nworkload: service\n",
		"openapi.yaml": api,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func risks(res *fleetgraph.ImpactResult) map[string]string {
	out := map[string]string{}
	for _, c := range res.Consumers {
		out[strings.TrimPrefix(c.Service, "registry.example.com%2Fshop/")] = c.Risk
	}
	return out
}

func short(keys []string) []string {
	out := []string{}
	for _, k := range keys {
		out = append(out, strings.TrimPrefix(k, "registry.example.com%2Fshop/"))
	}
	return out
}

// Impact answers "will it break?", not only "may it take the version?":
// a consumer whose range admits a breaking version is at risk, one whose
// range excludes it will not pick it up until it widens its range, and a
// transitive consumer takes the worst exposure over every chain.
func TestImpactRisks(t *testing.T) {
	s := riskFleet(t)
	older := payBundle(t, "1.0.0", true)
	tests := []struct {
		name     string
		newer    *bundle.Bundle
		want     map[string]string
		atRisk   []string
		excluded []string
		headline []string
	}{
		{"minor bump with a removal", payBundle(t, "1.1.0", false),
			map[string]string{"a": fleetgraph.RiskAtRisk, "b": fleetgraph.RiskUnknown, "c": fleetgraph.RiskUnknown, "d": fleetgraph.RiskExcluded,
				"e": fleetgraph.RiskIndirect, "f": fleetgraph.RiskUnknown, "g": fleetgraph.RiskUnaffected, "h": fleetgraph.RiskIndirect},
			[]string{"a"}, []string{"d"},
			[]string{"a breaking change without a major version bump (release it as 2.0.0)", "1 of 8 consumer(s) AT RISK, their range admits 1.1.0: a;",
				"1 will not pick it up until they widen their range: d;", "2 depend indirectly on those at risk or to review: e, h;", "3 of unknown exposure", "1 unaffected."}},
		{"major bump with the same removal", payBundle(t, "2.0.0", false),
			map[string]string{"a": fleetgraph.RiskExcluded, "b": fleetgraph.RiskUnknown, "c": fleetgraph.RiskUnknown, "d": fleetgraph.RiskExcluded,
				"e": fleetgraph.RiskUnaffected, "f": fleetgraph.RiskUnknown, "g": fleetgraph.RiskUnaffected, "h": fleetgraph.RiskUnaffected},
			[]string{}, []string{"a", "d"},
			[]string{"is BREAKING, announced by a major version bump", "0 of 8 consumer(s) at risk;", "2 will not pick it up until they widen their range: a, d;"}},
		{"compatible minor bump", payBundle(t, "1.1.0", true, true),
			map[string]string{"a": fleetgraph.RiskUnaffected, "b": fleetgraph.RiskUnknown, "c": fleetgraph.RiskUnknown, "d": fleetgraph.RiskExcluded,
				"e": fleetgraph.RiskUnaffected, "f": fleetgraph.RiskUnknown, "g": fleetgraph.RiskUnaffected, "h": fleetgraph.RiskUnaffected},
			[]string{}, []string{"d"},
			[]string{"is NON_BREAKING, compatible as its minor version bump announces", "0 of 8 consumer(s) at risk;"}},
		{"a new version that is not semver", payBundle(t, "next", false),
			map[string]string{"a": fleetgraph.RiskUnknown, "b": fleetgraph.RiskUnknown, "c": fleetgraph.RiskUnknown, "d": fleetgraph.RiskUnknown,
				"e": fleetgraph.RiskUnknown, "f": fleetgraph.RiskUnknown, "g": fleetgraph.RiskUnknown, "h": fleetgraph.RiskUnknown},
			[]string{}, []string{},
			[]string{"a breaking change without a major version bump:", "8 of unknown exposure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Impact(t.Context(), older, tt.newer, &fleetgraph.ImpactOptions{Domain: "registry.example.com/shop"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, risks(res)); diff != "" {
				t.Errorf("risks (-want +got):\n%s", diff)
			}
			res.AtRisk, res.Excluded = short(res.AtRisk), short(res.Excluded)
			if diff := cmp.Diff(tt.atRisk, res.AtRisk); diff != "" || res.AtRiskConsumers != len(tt.atRisk) {
				t.Errorf("atRisk %v (%d), want %v", res.AtRisk, res.AtRiskConsumers, tt.atRisk)
			}
			if diff := cmp.Diff(tt.excluded, res.Excluded); diff != "" || res.IncompatibleConsumers != len(tt.excluded) {
				t.Errorf("excluded %v (%d incompatible), want %v", res.Excluded, res.IncompatibleConsumers, tt.excluded)
			}
			h := strings.ReplaceAll(res.Headline(), "registry.example.com%2Fshop/", "")
			for _, want := range tt.headline {
				if !strings.Contains(h, want) {
					t.Errorf("headline lacks %q:\n%s", want, h)
				}
			}
			for _, c := range res.Consumers {
				if c.RiskReason == "" {
					t.Errorf("%s: risk %s without a reason", c.Service, c.Risk)
				}
			}
		})
	}
}

// The headline names at most ten consumers per risk and says how many
// more there are; the counts stay exact.
func TestImpactHeadlineIsBounded(t *testing.T) {
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return testAsOf }})
	const domain = "registry.example.com/shop"
	if err := b.UpsertRevision(&fleetgraph.Revision{Domain: domain, Name: "pay", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", 0), Source: "test"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 25; i++ {
		e := fleetgraph.Edge{Type: fleetgraph.EdgeDependency, Name: "pay", Ref: "oci://" + domain + "/pay", Compatibility: "^1.0.0"}
		if err := b.UpsertRevision(&fleetgraph.Revision{Domain: domain, Name: fmt.Sprintf("c%02d", i), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", i), Source: "test", Edges: []fleetgraph.Edge{e}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := b.Flush().Impact(t.Context(), payBundle(t, "1.0.0", true), payBundle(t, "1.0.1", false), &fleetgraph.ImpactOptions{Domain: domain})
	if err != nil {
		t.Fatal(err)
	}
	h := strings.ReplaceAll(res.Headline(), "registry.example.com%2Fshop/", "")
	if res.AtRiskConsumers != 25 || !strings.Contains(h, "25 of 25 consumer(s) AT RISK") || !strings.Contains(h, "c10 and 15 more") || strings.Contains(h, "c11") {
		t.Errorf("%d at risk; headline:\n%s", res.AtRiskConsumers, h)
	}
}

// A Builder's snapshots share impact's diffs: the same two revisions
// compared on a newer snapshot give the same changes, and an answer the
// caller modifies does not change the next one.
func TestImpactDiffSharedAcrossSnapshots(t *testing.T) {
	b, s1 := hubFleet(t, 20)
	older, newer := payBundle(t, "1.0.0", true), payBundle(t, "1.1.0", false)
	first, err := s1.Impact(t.Context(), older, newer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.BreakingChanges) == 0 {
		t.Fatal("removing /refunds should be breaking")
	}
	want := slices.Clone(first.BreakingChanges)
	first.BreakingChanges[0].Message = "scribbled by the caller"
	if err := b.UpsertRevision(&fleetgraph.Revision{Domain: "registry.example.com/shop", Name: "late", Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", 1<<30), Source: "test"}); err != nil {
		t.Fatal(err)
	}
	s2 := b.Flush()
	if s2.ID() == s1.ID() {
		t.Fatal("the change made no new snapshot")
	}
	for _, s := range []*fleetgraph.Snapshot{s2, s1} {
		again, err := s.Impact(t.Context(), older, newer, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(again.BreakingChanges, want); diff != "" {
			t.Errorf("snapshot %s: breaking changes (-got +want):\n%s", s.ID(), diff)
		}
		if again.TotalConsumers != first.TotalConsumers {
			t.Errorf("snapshot %s: %d consumers, the first answer %d", s.ID(), again.TotalConsumers, first.TotalConsumers)
		}
	}
}
