//go:build !sidecaronly

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/otlpreceiver"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestOperatorTraceIntake runs the operator with --trace-intake on envtest
// and posts spans with the OpenTelemetry Go SDK's OTLP/HTTP exporter over
// loopback: a client span of orders and its server span in payments, from
// two providers as two processes would. The edge appears in the next
// snapshot at /mcp (pacto_fleet_graph include_observed). The hostile
// callers: a ServiceAccount token with no RBAC (403), an oversized export
// (413) and a malformed one (400); after each the edge is still there.
func TestOperatorTraceIntake(t *testing.T) {
	admin, _, kubeconfigFile := operatorCluster(t, "kubepact-trace-intake-test")
	reg := testregistry.New(t, nil)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "traces-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"orders", "payments"} {
		ref := reg.Host + "/bundles/" + svc + ":1.0.0"
		if _, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", svc), "oci://"+ref, "--plain-http"); code != 0 {
			t.Fatalf("push %s: exit %d: %s", svc, code, stderr)
		}
		labels := map[string]string{"app": svc}
		for _, obj := range []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: svc}, Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/" + svc + ":1"}}}}}},
			&v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: svc}, Spec: v1alpha1.ServiceContractSpec{
				Bundle: v1alpha1.BundleSource{OCI: "oci://" + ref}, TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: svc}}},
		} {
			if err := admin.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Three callers: a collector that may post traces, a reader that may
	// list the namespace's ServiceContracts, and a token with no RBAC.
	token := func(name string, rules []rbacv1.PolicyRule, cluster bool) string {
		t.Helper()
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}}
		objs := []client.Object{sa}
		subject := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns.Name, Name: name}}
		switch {
		case rules != nil && cluster:
			objs = append(objs, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-" + name}, Rules: rules},
				&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-" + name}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: ns.Name + "-" + name}})
		case rules != nil:
			objs = append(objs, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}, Rules: rules},
				&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}})
		}
		for _, obj := range objs {
			if err := admin.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
		tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
		if err := admin.SubResource("token").Create(t.Context(), sa, tr); err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	collector := token("collector", []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts/traces"}, Verbs: []string{"create"}}}, true)
	reader := token("reader", []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"list"}}}, false)
	nobody := token("nobody", nil, false)

	op := startOperator(t, kubeconfigFile, "--plain-http", "--allowed-registries", reg.Host, "--trace-intake", "--log-format", "json")
	mcpAddr, logs := op.mcpAddr, op.logs

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "trace-intake-test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: "http://" + mcpAddr + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{token: reader}}}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v\n%s", err, logs.String())
	}
	defer cs.Close()
	// observed polls the graph of orders until want holds: the fleet and
	// the intake publish asynchronously. The deadline bounds a hang.
	observed := func(want func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_graph", Arguments: map[string]any{"service": "orders", "include_observed": true}})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if want(string(raw)) {
				return string(raw)
			}
			if time.Now().After(deadline) || processExited(op.exited) {
				t.Fatalf("pacto_fleet_graph orders: %s\noperator log:\n%s", raw, logs.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	observed(func(s string) bool {
		return strings.Contains(s, `"found":true`) && strings.Contains(s, `"name":"payments"`) && !strings.Contains(s, "OBSERVED_EDGES_UNAVAILABLE")
	})

	intake := "http://" + mcpAddr + "/v1/traces"
	if err := otlpreceiver.ExportCall(t, intake, nobody); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a token with no RBAC: %v, want 403", err)
	}
	if err := otlpreceiver.ExportCall(t, intake, collector); err != nil {
		t.Fatalf("the collector's export: %v\n%s", err, logs.String())
	}
	hasEdge := func(s string) bool {
		return strings.Contains(s, `"observed":[{"calls":1,"fromService":"`) && strings.Contains(s, `/orders","lastSeen"`) &&
			strings.Contains(s, `"provenance":"declared+observed","toService":"`) && strings.Contains(s, `/payments"}]`)
	}
	observed(hasEdge)

	for _, tc := range []struct {
		name   string
		body   []byte
		status int
		says   string
	}{
		{"oversized", bytes.Repeat([]byte(" "), 5<<20), http.StatusRequestEntityTooLarge, "at most 4194304 bytes"},
		{"malformed", []byte(`{"resourceSpans": [{"scopeSpans": "x"}]}`), http.StatusBadRequest, "OTLP/JSON"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, intake, bytes.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+collector)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(msg), tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, resp.StatusCode, msg, tc.status, tc.says)
		}
	}
	observed(hasEdge) // nothing known was lost
}
