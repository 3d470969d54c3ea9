package fleetgraph_test

import (
	"strings"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
)

// TestRequiredNessGradesSeverity: evidence that reports an optional
// dependency unreachable, or an optional configuration absent or
// mismatched, shows the finding as a warning (Pacto 2.0); the same codes
// on required assertions, or on a target linked to no revision, keep the
// evidence's severity.
func TestRequiredNessGradesSeverity(t *testing.T) {
	b := fleetgraph.NewBuilder(nil)
	rev := &fleetgraph.Revision{Name: "orders", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64), Source: "test",
		Edges: []fleetgraph.Edge{
			{Type: fleetgraph.EdgeDependency, Name: "db", Ref: "oci://r.example/org/db", Required: true},
			{Type: fleetgraph.EdgeDependency, Name: "mail", Ref: "oci://r.example/org/mail", Required: false},
		},
		OptionalConfigurations: []string{"tuning"},
	}
	if err := b.UpsertRevision(rev); err != nil {
		t.Fatal(err)
	}
	fs := []fleetgraph.Finding{
		{Code: fleetgraph.CodeDependencyUnreachable, Severity: "error", SubjectKind: "dependency", SubjectName: "db"},
		{Code: fleetgraph.CodeDependencyUnreachable, Severity: "error", SubjectKind: "dependency", SubjectName: "mail"},
		{Code: fleetgraph.CodeDependencyUnreachable, Severity: "error", Path: "dependencies[1]"},
		{Code: fleetgraph.CodeDependencyUnreachable, Severity: "error", Path: "dependencies[0]"},
		{Code: fleetgraph.CodeConfigurationAbsent, Severity: "error", SubjectKind: "configuration", SubjectName: "tuning"},
		{Code: fleetgraph.CodeConfigurationMismatch, Severity: "error", SubjectKind: "configuration", SubjectName: "tuning"},
		{Code: fleetgraph.CodeConfigurationMismatch, Severity: "error", SubjectKind: "configuration", SubjectName: "app"},
		{Code: "WORKLOAD_MISMATCH", Severity: "error", SubjectName: "mail"},
	}
	want := []string{"error", "warning", "warning", "error", "warning", "warning", "error", "error"}
	for _, tg := range []*fleetgraph.Target{
		{Scope: "prod", Kind: "k8s", Name: "orders", Service: "orders", Digest: rev.Digest, Findings: fs, Source: "test"},
		{Scope: "prod", Kind: "k8s", Name: "stray", Service: "orders", Digest: "sha256:" + strings.Repeat("b", 64), Findings: fs, Source: "test"},
	} {
		if err := b.UpsertTarget(tg); err != nil {
			t.Fatal(err)
		}
	}
	s := b.Flush()
	res, err := s.Get(fleetgraph.GetQuery{Target: "prod/k8s/orders"})
	if err != nil || res.Target == nil {
		t.Fatalf("get linked target: %v %+v", err, res)
	}
	for i, f := range res.Target.Findings {
		if f.Severity != want[i] {
			t.Errorf("linked finding %d (%s %s%s): severity %s, want %s", i, f.Code, f.SubjectName, f.Path, f.Severity, want[i])
		}
	}
	res, err = s.Get(fleetgraph.GetQuery{Target: "prod/k8s/stray"})
	if err != nil || res.Target == nil {
		t.Fatalf("get unlinked target: %v %+v", err, res)
	}
	for i, f := range res.Target.Findings {
		if f.Severity != "error" {
			t.Errorf("unlinked finding %d: severity %s, want the evidence's error", i, f.Severity)
		}
	}
}
