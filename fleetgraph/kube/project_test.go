package kube

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/fleetgraph"
)

// TestTransformKeepsOnlyWhatTheGraphReads: managedFields, labels, other
// annotations and the pod template beyond images are gone before an
// object reaches the cache.
func TestTransformKeepsOnlyWhatTheGraphReads(t *testing.T) {
	in := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", ResourceVersion: "7", Labels: map[string]string{"a": "b"},
			Annotations:   map[string]string{AnnotationServiceContract: "web", "kubectl.kubernetes.io/last-applied-configuration": "{…}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "r.example/web:1", Env: []corev1.EnvVar{{Name: "SECRET", Value: "x"}}}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2, Replicas: 3},
	}
	out, err := transform(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", ResourceVersion: "7", Annotations: map[string]string{AnnotationServiceContract: "web"}},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "r.example/web:1"}}}}},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, Replicas: 3},
	}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("transform (-want +got):\n%s", d)
	}
}

// TestPactoTargetBothStatusShapes reads a Pacto CR of the monorepo
// operator and one of the standalone operator.
func TestPactoTargetBothStatusShapes(t *testing.T) {
	mono := map[string]any{
		"contractStatus":     "NonCompliant",
		"contract":           map[string]any{"serviceName": "orders", "resolvedRef": "ghcr.io/acme/orders:1.0.0@sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
		"evaluationCoverage": map[string]any{"evaluated": int64(3), "required": int64(4)},
		"findings":           []any{map[string]any{"code": "PORT_MISSING", "severity": "error", "category": "interfaces", "message": "m", "contractPath": "interfaces[0]"}},
		"observedRuntime":    map[string]any{"workloadKind": "Deployment"},
		"lastReconciledAt":   "2026-11-30T10:00:00Z",
	}
	standalone := map[string]any{"contractStatus": "Compliant", "summary": map[string]any{"total": int64(5), "passed": int64(4), "failed": int64(1)}}
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   fleetgraph.Target
	}{
		{"monorepo", mono, fleetgraph.Target{Scope: "ns", Kind: KindPacto, Name: "cr", Service: "orders", Domain: "ghcr.io/acme",
			ResolvedRef: "oci://ghcr.io/acme/orders:1.0.0@sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", Digest: "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", Compliance: fleetgraph.StatusNonCompliant,
			Coverage:        &fleetgraph.Coverage{Evaluated: 3, Required: 4},
			Findings:        []fleetgraph.Finding{{Code: "PORT_MISSING", Severity: "error", Category: "interfaces", Message: "m", Path: "interfaces[0]"}},
			ObservedRuntime: json.RawMessage(`{"workloadKind":"Deployment"}`), Source: "k"}},
		{"standalone", standalone, fleetgraph.Target{Scope: "ns", Kind: KindPacto, Name: "cr", Service: "cr", Compliance: fleetgraph.StatusCompliant,
			Coverage: &fleetgraph.Coverage{Evaluated: 5, Required: 5}, Source: "k"}},
		{"not evaluated", nil, fleetgraph.Target{Scope: "ns", Kind: KindPacto, Name: "cr", Service: "cr", Source: "k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cr", "namespace": "ns"}}}
			if tc.status != nil {
				u.Object["status"] = tc.status
			}
			got := pactoTarget(slimPacto(u), "k")
			got.EvidenceAt, got.ReconciledAt = got.EvidenceAt.UTC(), got.ReconciledAt.UTC()
			want := tc.want
			if tc.name == "monorepo" {
				want.EvidenceAt = got.EvidenceAt
				want.ReconciledAt = got.ReconciledAt
				if got.EvidenceAt.Format("2006-01-02T15") != "2026-11-30T10" {
					t.Errorf("evidenceAt %v, want 2026-11-30T10:00Z", got.EvidenceAt)
				}
			}
			if d := cmp.Diff(&want, got); d != "" {
				t.Errorf("target (-want +got):\n%s", d)
			}
		})
	}
}

// TestComplianceOfConditions maps a ServiceContract's conditions.
func TestComplianceOfConditions(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s}
	}
	for _, tc := range []struct {
		conds []metav1.Condition
		want  fleetgraph.Status
	}{
		{nil, fleetgraph.StatusNotEvaluated},
		{[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionTrue)}, fleetgraph.StatusCompliant},
		{[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse), cond(v1alpha1.ConditionContractValid, metav1.ConditionFalse)}, fleetgraph.StatusInvalid},
		{[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse), cond(v1alpha1.ConditionTargetBound, metav1.ConditionFalse)}, fleetgraph.StatusNonCompliant},
		{[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionUnknown)}, fleetgraph.StatusUnknown},
	} {
		sc := &v1alpha1.ServiceContract{Status: v1alpha1.ServiceContractStatus{Conditions: tc.conds}}
		if got := complianceOf(sc); got != tc.want {
			t.Errorf("complianceOf(%v) = %s, want %s", tc.conds, got, tc.want)
		}
	}
}

// TestOCIRef reads the references ServiceContract status and spec hold.
func TestOCIRef(t *testing.T) {
	for _, tc := range []struct{ in, ref, domain string }{
		{"127.0.0.1:5000/org/payments:1.0.0@sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", "oci://127.0.0.1:5000/org/payments:1.0.0@sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", "127.0.0.1:5000/org"},
		{"oci://ghcr.io/payments:1", "oci://ghcr.io/payments:1", "ghcr.io"},
		{"configmap/bundle", "", ""},
		{"", "", ""},
	} {
		ref, domain, ok := ociRef(tc.in)
		if ref != tc.ref || domain != tc.domain || ok != (tc.ref != "") {
			t.Errorf("ociRef(%q) = %q, %q, %v; want %q, %q", tc.in, ref, domain, ok, tc.ref, tc.domain)
		}
	}
}
