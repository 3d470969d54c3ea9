//go:build !sidecaronly

package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/test/oidcprovider"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestOperatorOAuthScopesFleet: the operator process with --mcp-auth
// oauth on envtest. The same contract runs in namespaces a and b; tokens
// from the loopback OpenID provider name oidc:alice (bound to list
// ServiceContracts in a) and oidc:bob (bound nowhere). alice's
// pacto_fleet_get shows the target in a only, bob's finds nothing; a
// request without a token is a 401 naming the metadata.
func TestOperatorOAuthScopesFleet(t *testing.T) {
	admin, _, kubeconfigFile := operatorCluster(t, "kubepact-operator-oauth-test")
	reg := testregistry.New(t, nil)
	ref := reg.Host + "/bundles/catalog:1.4.0"
	if _, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "oci://"+ref, "--plain-http"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	var nss []string
	for range 2 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "oauth-"}}
		if err := admin.Create(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
		nss = append(nss, ns.Name)
		labels := map[string]string{"app": "catalog"}
		for _, obj := range []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"}, Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/catalog:1"}}}},
			}},
			&v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"}, Spec: v1alpha1.ServiceContractSpec{
				Bundle: v1alpha1.BundleSource{OCI: "oci://" + ref}, TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "catalog"},
			}},
		} {
			if err := admin.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	nsA, nsB := nss[0], nss[1]
	for _, obj := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "oidc:alice"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"}},
	} {
		if err := admin.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}

	p := oidcprovider.Start(t, oidcprovider.Client{ID: "alice", Secret: "s"}, oidcprovider.Client{ID: "bob", Secret: "s"})
	op := startOperator(t, kubeconfigFile, "--plain-http", "--allowed-registries", reg.Host,
		"--mcp-auth", "oauth", "--oauth-issuer", p.Issuer, "--oauth-username-prefix", "oidc:")
	mcpAddr, logs := op.mcpAddr, op.logs

	endpoint := "http://" + mcpAddr + mcp.Endpoint
	metadata := "http://" + mcpAddr + mcp.ProtectedResourceMetadataPath + mcp.Endpoint
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if want := `Bearer resource_metadata="` + metadata + `"`; resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), want) {
		t.Errorf("/mcp without a token: %d %q; want 401 %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}

	p.SetAudience(endpoint) // the operator's default resource
	session := func(who string) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "operator-oauth-test", Version: "v0"}, nil).Connect(t.Context(),
			&sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: bearerTransport{token: p.Token(t, who, "mcp:read")}}}, nil)
		if err != nil {
			t.Fatalf("%s connecting to /mcp: %v\n%s", who, err, logs.String())
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	get := func(cs *sdk.ClientSession) string {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"service": "catalog"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}
	alice, bob := session("alice"), session("bob")
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := get(alice)
		if strings.Contains(got, `"found":true`) && strings.Contains(got, nsA) && strings.Contains(got, `"kind":"Deployment"`) {
			if strings.Contains(got, nsB) {
				t.Errorf("alice (bound in %s) sees %s: %s", nsA, nsB, got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's pacto_fleet_get catalog never showed her target in %s: %s\noperator log:\n%s", nsA, got, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := get(bob); !strings.Contains(got, `"found":false`) || strings.Contains(got, nsA) || strings.Contains(got, nsB) {
		t.Errorf("bob (bound nowhere) pacto_fleet_get catalog: %s; want found false, no namespace", got)
	}
}
