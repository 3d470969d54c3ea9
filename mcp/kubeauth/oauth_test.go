package kubeauth_test

import (
	"net"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/kubeauth"
	"github.com/kubepact/kubepact/mcp/oauth"
	"github.com/kubepact/kubepact/test/oidcprovider"
)

// grantSubject lets a User or Group list ServiceContracts in ns.
func grantSubject(t testing.TB, ns, kind, name string) {
	t.Helper()
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"get", "list", "watch"}}}
	role := "read-contracts-" + kind + "-" + name
	suite.Create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role}, Rules: rules})
	suite.Create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role},
		Subjects: []rbacv1.Subject{{Kind: kind, APIGroup: "rbac.authorization.k8s.io", Name: name}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role}})
}

// TestOAuthScopesFleet: the operator's --mcp-auth oauth. Tokens from a
// real OpenID provider on loopback name a user and groups; the same
// SubjectAccessReviews as kubernetes mode (sent as the operator's
// ServiceAccount) scope the fleet answers: user oidc:alice, bound in
// namespace a, sees a only; oidc:bob, in group oidc:team-b bound in b,
// sees b only; a token claiming system:masters gains nothing; a token
// naming a ServiceAccount as its user is refused.
func TestOAuthScopesFleet(t *testing.T) {
	nsA, nsB := suite.NewNamespace(t), suite.NewNamespace(t)
	grantSubject(t, nsA, "User", "oidc:alice")
	grantSubject(t, nsB, "Group", "oidc:team-b")
	p := oidcprovider.Start(t,
		oidcprovider.Client{ID: "alice", Secret: "s", Subject: "alice"},
		oidcprovider.Client{ID: "bob", Secret: "s", Subject: "bob", Groups: []string{"team-b"}},
		oidcprovider.Client{ID: "mallory", Secret: "s", Subject: "mallory", Groups: []string{"system:masters"}},
	)

	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + mcp.Endpoint
	_ = ln.Close() // serveMCP listens again; the resource is only a name for the tokens
	v, err := oauth.New(&oauth.Options{Issuer: p.Issuer, Resource: resource, UsernamePrefix: "oidc:", GroupsPrefix: "oidc:"})
	if err != nil {
		t.Fatal(err)
	}
	p.SetAudience(resource)
	ident, err := kubeauth.NewKubeIdentity(suite.OperatorConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := serveMCP(t, &mcp.Options{
		Transport: mcp.TransportHTTP, Workspace: t.TempDir(), Families: []mcp.Family{mcp.FamilyFleet}, ReadOnly: true,
		Fleet:       mcp.FleetOptions{Enabled: true, Builder: identityFleet(t, nsA, nsB)},
		HTTPOptions: mcp.HTTPOptions{Authenticator: v, ProtectedResource: v.ProtectedResource()}, Scoper: ident,
	})

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, tc := range []struct {
			who   string
			total float64
			keys  string
		}{
			{"alice", 2, "catalog,orders"},
			{"bob", 1, "payments"},
			{"mallory", 0, ""},
		} {
			cs := mcpClient(t, url, p.Token(t, tc.who, "mcp:read"), era)
			got := call(t, cs, "pacto_fleet_search", map[string]any{})
			if got["total"] != tc.total || serviceKeys(got) != tc.keys {
				t.Errorf("%s (%s): total %v, services %q; want %v, %q", tc.who, era, got["total"], serviceKeys(got), tc.total, tc.keys)
			}
		}
	}
}
