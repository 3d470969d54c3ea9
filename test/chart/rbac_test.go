package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// writeVerbs are the verbs that change what the API server stores.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "*"}

// reviewResources are created, never stored: TokenReview and
// SubjectAccessReview answer a question and persist nothing, so create on
// them is a read of the API server's opinion (the /mcp identity check).
var reviewResources = map[string]string{
	"tokenreviews":         "authentication.k8s.io",
	"subjectaccessreviews": "authorization.k8s.io",
}

// roleRules is one rendered ClusterRole or Role.
type roleRules struct {
	kind, name, namespace string
	rules                 []rbacv1.PolicyRule
}

// checkRules returns every grant in roles that breaks the operator's
// read-only promise: a write is allowed only on servicecontracts/status,
// Events, Leases (in its own namespace), its own webhook certificate Secret
// (create in its own namespace — create cannot be limited by name —, get
// and update by name) and its own MutatingWebhookConfiguration (by name);
// Secrets are otherwise only read one by one (get), and nothing is a
// wildcard.
func checkRules(roles []roleRules, ns, secretName, webhookConfig string) []string {
	var bad []string
	for _, r := range roles {
		where := r.kind + "/" + r.name
		for _, rule := range r.rules {
			for _, field := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
				if slices.Contains(field, "*") {
					bad = append(bad, fmt.Sprintf("%s: wildcard in %v", where, rule))
				}
			}
			if len(rule.NonResourceURLs) > 0 {
				bad = append(bad, fmt.Sprintf("%s: non-resource URLs %v", where, rule.NonResourceURLs))
			}
			for _, group := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, verb := range rule.Verbs {
						if why := grantProblem(r, group, res, verb, rule.ResourceNames, ns, secretName, webhookConfig); why != "" {
							bad = append(bad, fmt.Sprintf("%s: %s %s (group %q, names %v): %s", where, verb, res, group, rule.ResourceNames, why))
						}
					}
				}
			}
		}
	}
	return bad
}

func grantProblem(r roleRules, group, res, verb string, names []string, ns, secretName, webhookConfig string) string {
	namespaced := r.kind == "Role" && r.namespace == ns
	onlyNamed := func(name string) bool { return len(names) == 1 && names[0] == name }
	if group == "" && res == "secrets" {
		switch {
		case verb == "get":
			return ""
		case verb == "create" && namespaced:
			return "" // the self-managed certificate Secret, created once
		case verb == "update" && namespaced && onlyNamed(secretName):
			return ""
		}
		return "Secrets are read one by one (get) and written only as the webhook's own certificate Secret"
	}
	if !slices.Contains(writeVerbs, verb) {
		return ""
	}
	switch {
	case group == "kubepact.dev" && res == "servicecontracts/status" && (verb == "patch" || verb == "update"):
		return ""
	case (group == "" || group == "events.k8s.io") && res == "events" && (verb == "create" || verb == "patch"):
		return ""
	case group == "coordination.k8s.io" && res == "leases" && namespaced && verb != "deletecollection":
		return ""
	case group == "admissionregistration.k8s.io" && res == "mutatingwebhookconfigurations" && verb == "update" && onlyNamed(webhookConfig):
		return ""
	case reviewResources[res] == group && group != "" && verb == "create":
		return "" // a non-persisting review
	}
	return "a write outside status, events, leases and the webhook's own Secret and configuration"
}

// fleetReader is the ClusterRole the chart ships for callers of /mcp.
const fleetReader = "kubepact-fleet-reader"

// checkReaderRules returns every grant of the fleet-reader role beyond
// reading ServiceContracts: it is bound to people and agents, so it may
// get, list and watch servicecontracts.kubepact.dev (what the operator's
// SubjectAccessReview asks about) and nothing else — no other resource, no
// write, no wildcard.
func checkReaderRules(r roleRules) []string {
	var bad []string
	if len(r.rules) == 0 {
		bad = append(bad, r.kind+"/"+r.name+": no rule: it lets nobody see the fleet")
	}
	for _, rule := range r.rules {
		if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
			bad = append(bad, fmt.Sprintf("%s/%s: %v: non-resource URLs or names", r.kind, r.name, rule))
		}
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, verb := range rule.Verbs {
					if group != "kubepact.dev" || res != "servicecontracts" || !slices.Contains([]string{"get", "list", "watch"}, verb) {
						bad = append(bad, fmt.Sprintf("%s/%s: %s %s (group %q): a reader reads ServiceContracts only", r.kind, r.name, verb, res, group))
					}
				}
			}
		}
	}
	return bad
}

// renderedRoles reads the ClusterRoles and Roles among objs.
func renderedRoles(t *testing.T, objs []*unstructured.Unstructured) []roleRules {
	t.Helper()
	var roles []roleRules
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
			continue
		}
		var cr rbacv1.ClusterRole // Role has the same rules field
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cr); err != nil {
			t.Fatalf("%s/%s: %v", o.GetKind(), o.GetName(), err)
		}
		roles = append(roles, roleRules{kind: o.GetKind(), name: o.GetName(), namespace: o.GetNamespace(), rules: cr.Rules})
	}
	return roles
}

// TestRBACReadOnly: installing the chart with default values grants no write
// verb outside servicecontracts/status, events, leases and the webhook's own
// Secret and configuration; TokenReviews and SubjectAccessReviews are
// created, and persist nothing.
func TestRBACReadOnly(t *testing.T) {
	needHelm(t)
	for name, args := range map[string][]string{"defaults": nil, "all-options": {"-f", allOptions}} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)
			roles := renderedRoles(t, objs)
			if len(roles) < 3 {
				t.Fatalf("rendered %d roles, want the operator's ClusterRole, the webhook Role and the leader-election Role", len(roles))
			}
			// The fleet reader, for callers of /mcp, exists where answers
			// are scoped by Kubernetes identity (the defaults; all-options
			// authenticates with one shared token).
			var reader *roleRules
			for i := range roles {
				if roles[i].kind == "ClusterRole" && roles[i].name == fleetReader {
					reader = &roles[i]
				}
			}
			switch {
			case reader == nil && name == "defaults":
				t.Errorf("the chart renders no ClusterRole %s for callers of /mcp", fleetReader)
			case reader != nil && name != "defaults":
				t.Errorf("ClusterRole %s is rendered with mcp.auth token, where nothing reads it", fleetReader)
			case reader != nil:
				if bad := checkReaderRules(*reader); len(bad) > 0 {
					t.Errorf("the fleet reader grants more than reading ServiceContracts:\n%s", strings.Join(bad, "\n"))
				}
			}
			if bad := checkRules(roles, releaseNS, "kubepact-webhook-cert", "kubepact-injector"); len(bad) > 0 {
				t.Errorf("the rendered RBAC grants more than the operator's promise:\n%s", strings.Join(bad, "\n"))
			}
			// Every binding binds the operator's ServiceAccount alone.
			for _, o := range objs {
				if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
					continue
				}
				var b rbacv1.RoleBinding
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
					t.Fatal(err)
				}
				want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "kubepact-operator", Namespace: releaseNS}}
				if diff := cmp.Diff(want, b.Subjects); diff != "" {
					t.Errorf("%s/%s subjects (-want +got):\n%s", o.GetKind(), o.GetName(), diff)
				}
			}
		})
	}
}

// TestRBACExactlyAsGenerated: the rendered ClusterRole and Role carry the
// rules controller-gen wrote to config/rbac/role.yaml, unchanged.
func TestRBACExactlyAsGenerated(t *testing.T) {
	needHelm(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	generated, err := decode(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	rendered := render(t)
	for _, g := range generated {
		r := find(rendered, g.GetKind(), "kubepact-operator")
		if r == nil {
			t.Errorf("the chart renders no %s kubepact-operator", g.GetKind())
			continue
		}
		want, _, _ := unstructured.NestedSlice(g.Object, "rules")
		got, _, _ := unstructured.NestedSlice(r.Object, "rules")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s rules differ from config/rbac/role.yaml (-generated +rendered):\n%s", g.GetKind(), diff)
		}
	}
}

// TestCheckReaderRulesRefuses: the reader's checker refuses what a role
// bound to people must not grant, and admits the chart's.
func TestCheckReaderRulesRefuses(t *testing.T) {
	sc := func(verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: verbs}
	}
	for _, tc := range []struct {
		name  string
		rules []rbacv1.PolicyRule
		bad   bool
	}{
		{"the chart's", []rbacv1.PolicyRule{sc("get", "list", "watch")}, false},
		{"list alone", []rbacv1.PolicyRule{sc("list")}, false},
		{"no rule", nil, true},
		{"patch", []rbacv1.PolicyRule{sc("list", "patch")}, true},
		{"status", []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts/status"}, Verbs: []string{"get"}}}, true},
		{"secrets", []rbacv1.PolicyRule{sc("list"), {APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}, true},
		{"wildcard verb", []rbacv1.PolicyRule{sc("*")}, true},
		{"wildcard resource", []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"*"}, Verbs: []string{"list"}}}, true},
		{"by name", []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, ResourceNames: []string{"x"}, Verbs: []string{"get"}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := checkReaderRules(roleRules{kind: "ClusterRole", name: fleetReader, rules: tc.rules})
			if got := len(bad) > 0; got != tc.bad {
				t.Fatalf("refused = %v (%q), want %v", got, bad, tc.bad)
			}
		})
	}
}

// TestCheckRulesRefuses: the checker itself finds what it must refuse (a
// checker that passes everything would make TestRBACReadOnly pass too).
func TestCheckRulesRefuses(t *testing.T) {
	const ns = "kubepact-system"
	for _, tc := range []struct {
		name string
		role roleRules
		bad  bool
	}{
		{"cluster-admin", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, true},
		{"list secrets", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}}, true},
		{"create secrets cluster-wide", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}}}}, true},
		{"update any secret", roleRules{kind: "Role", namespace: ns, rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"update"}}}}, true},
		{"patch deployments", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"patch"}}}}, true},
		{"update servicecontracts", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"update"}}}}, true},
		{"any webhook configuration", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"}, Verbs: []string{"update"}}}}, true},
		{"leases cluster-wide", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}}}}, true},
		{"create pods", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}}}, true},
		{"non-resource URL", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, true},
		{"read pods", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}}}, false},
		{"status patch", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts/status"}, Verbs: []string{"get", "patch"}}}}, false},
		{"reviews", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}}}, false},
		{"review in the wrong group", roleRules{kind: "ClusterRole", rules: []rbacv1.PolicyRule{{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}}}, true},
		{"own secret by name", roleRules{kind: "Role", namespace: ns, rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"kubepact-webhook-cert"}, Verbs: []string{"get", "update"}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := checkRules([]roleRules{tc.role}, ns, "kubepact-webhook-cert", "kubepact-injector")
			if got := len(bad) > 0; got != tc.bad {
				t.Fatalf("refused = %v (%q), want %v", got, bad, tc.bad)
			}
		})
	}
}
