//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// Names the story reads on Pods (controllers' annotations and label, as a
// user writes them; spelled out so that the suite breaks if they change).
const (
	labelInjection           = "kubepact.dev/injection"
	annotationContract       = "kubepact.dev/contract"
	annotationInjectedBundle = "kubepact.dev/injected-bundle"
	annotationUpstreamPort   = "kubepact.dev/upstream-port"
)

// The versions of kubepact's image the story installs and upgrades to
// (`make image-push` with VERSION set, as a release would set it).
var imageVersions = [2]string{"v0.0.1-e2e", "v0.0.2-e2e"}

// story is the state the steps hand on.
type story struct {
	root      *testing.T
	b         backend
	sh        *readme
	installed []*unstructured.Unstructured
	// shop (injection enabled) holds catalog and orders; billing holds
	// payments.
	shop, billing string
	// digests pushed, by bundle name; catalog's first and moved digests.
	digests          map[string]string
	catalogMoved     string
	aliceTok, bobTok string
	catalogPod       *corev1.Pod
}

// TestE2E is the whole story, step by step; a step that fails stops it.
func TestE2E(t *testing.T) {
	s := &story{root: t, b: newBackend(t), digests: map[string]string{}}
	for _, step := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Install", s.install},
		{"OperatorReady", s.operatorReady},
		{"OperatorReadyThroughProbes", s.operatorProbes},
		{"ServiceContractsReady", s.contractsReady},
		{"FleetAnswersByIdentity", s.fleetByIdentity},
		{"UpgradeChangesTheCRD", s.upgrade},
		{"DeploymentGetsSidecar", s.deploymentGetsSidecar},
		{"WebhookThroughService", s.webhookThroughService},
		{"SidecarCallsService", s.sidecarCallsService},
		{"GRPCServiceGetsSidecar", s.grpcServiceGetsSidecar},
		{"SidecarPortForwardREADME", s.sidecarPortForward},
		{"SidecarRestartedByKubelet", s.sidecarRestarted},
		{"SidecarReachesOnlyItsPod", s.sidecarOnlyLocalhost},
		{"TagMovedIsFollowed", s.tagMoved},
		{"LeaderFailover", s.leaderFailover},
		{"RollingUpgradeThroughService", s.rollingUpgrade},
		{"UninstallLeavesNothing", s.uninstall},
	} {
		if !t.Run(step.name, step.fn) {
			t.Fatalf("step %s failed; the steps after it need it", step.name)
		}
	}
}

// install runs the README's image and install commands: the image
// pushed to the suite's registry with `make image-push`, and the chart
// installed with the digest it printed — from a checkout of an earlier
// chart, whose CRD the upgrade step changes.
func (s *story) install(t *testing.T) {
	push, _ := s.b.registry()
	s.sh = newReadme(s.root, s.b.shell(t), push)
	if why := s.b.cannotInstall(); why != "" {
		t.Logf("README image and install: not run on this back end: %s", why)
	} else {
		s.sh.run(t, "image", repoRoot(), []string{"VERSION=" + imageVersions[0], "LOCALBIN=" + t.TempDir()}, nil)
		s.sh.run(t, "install", earlierCheckout(t), nil, nil)
		if fields := crdStatusFields(t, s.b.admin()); slices.Contains(fields, "pods") {
			t.Fatalf("the install's CRD has status.pods (%v); want the earlier CRD of testdata", fields)
		}
		// What helm install printed (NOTES.txt) upgrades the CRDs as the
		// README does.
		for _, cmd := range commands(readmeBlock(t, "upgrade")) {
			if line := oneLine(cmd); strings.HasPrefix(line, "kubectl apply ") && !strings.Contains(s.sh.helmOut, line) {
				t.Errorf("helm install's notes lack the README's CRD upgrade `%s`:\n%s", line, s.sh.helmOut)
			}
		}
	}
	s.installed = s.b.installed(t)
	if len(s.installed) == 0 {
		t.Fatal("the install has no objects")
	}
	// kubectl-level: every installed object exists.
	for _, o := range s.installed {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.GroupVersionKind())
		ns := o.GetNamespace()
		if namespaced, _ := s.b.admin().IsObjectNamespaced(o); namespaced && ns == "" {
			ns = installNamespace
		}
		if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: o.GetName()}, u); err != nil {
			t.Errorf("%s %s/%s: %v", o.GetKind(), ns, o.GetName(), err)
		}
	}
}

func (s *story) operatorReady(t *testing.T) {
	s.b.waitOperatorReady(t)
	// Ready means the webhook's CA is in the configuration.
	eventually(t, "the webhook configuration carries the operator's CA", 60*time.Second, func() error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind("MutatingWebhookConfiguration")
		if err := s.b.admin().Get(t.Context(), client.ObjectKey{Name: webhookConfig}, u); err != nil {
			return err
		}
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for _, h := range hooks {
			ca, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
			if ca == "" {
				return fmt.Errorf("webhook %v has no caBundle", h.(map[string]any)["name"])
			}
		}
		return nil
	})
}

// push pushes an example bundle (or dir) under repo:tag and returns its
// digest.
func (s *story) push(t *testing.T, dir, repoTag string) string {
	t.Helper()
	pushHost, _ := s.b.registry()
	out := run(t, []string{"HOME=" + t.TempDir(), "KUBEPACT_CACHE_DIR=" + t.TempDir()}, s.b.cli(t), "push", dir, "oci://"+pushHost+"/"+repoTag, "--plain-http")
	d := strings.TrimSpace(out)
	if !strings.HasPrefix(d, "sha256:") {
		t.Fatalf("push %s: printed %q, want a digest", repoTag, d)
	}
	return d
}

func (s *story) contractsReady(t *testing.T) {
	c := s.b.admin()
	_, pull := s.b.registry()
	// shop is the README's namespace: its reach and inject commands name
	// it (and label it for injection).
	shop := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	billing := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-billing-"}}
	for _, ns := range []*corev1.Namespace{shop, billing} {
		if err := c.Create(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
	}
	s.shop, s.billing = shop.Name, billing.Name
	for _, sv := range []struct{ name, ns string }{{"catalog", s.shop}, {"orders", s.shop}, {"payments", s.billing}} {
		s.digests[sv.name] = s.push(t, filepath.Join(repoRoot(), "examples", "bundles", sv.name), "bundles/"+sv.name+":e2e")
		app := corev1.Container{Name: sv.name, Image: "example.invalid/" + sv.name + ":1", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
		var annotations map[string]string
		if sv.name == "catalog" {
			// The demo service, with no replica until the contract is
			// Ready (DeploymentGetsSidecar scales it up).
			// The demo service does not listen on the contract's server
			// port, so the Pod names its own, as a user's would. The
			// contract annotation comes from the README's inject command.
			app = s.b.demoContainer(t)
			annotations = map[string]string{annotationUpstreamPort: fmt.Sprint(app.Ports[0].ContainerPort)}
		}
		labels := map[string]string{"app": sv.name}
		if err := c.Create(t.Context(), &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: sv.ns, Name: sv.name},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{app}},
				},
			},
		}); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(t.Context(), &v1alpha1.ServiceContract{
			ObjectMeta: metav1.ObjectMeta{Namespace: sv.ns, Name: sv.name},
			Spec: v1alpha1.ServiceContractSpec{
				Bundle:    v1alpha1.BundleSource{OCI: "oci://" + pull + "/bundles/" + sv.name + ":e2e"},
				TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: sv.name},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for name, ns := range map[string]string{"catalog": s.shop, "orders": s.shop, "payments": s.billing} {
		s.waitReady(t, ns, name, s.digests[name], "")
	}
}

// waitReady waits until the ServiceContract is Ready (as `kubectl wait
// --for=condition=Ready` reads it) at digest, and at version when given.
func (s *story) waitReady(t *testing.T, ns, name, digest, version string) *v1alpha1.ServiceContract {
	t.Helper()
	sc := &v1alpha1.ServiceContract{}
	eventually(t, fmt.Sprintf("ServiceContract %s/%s Ready at %s", ns, name, digest), 90*time.Second, func() error {
		if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, sc); err != nil {
			return err
		}
		ready := false
		for _, c := range sc.Status.Conditions {
			if c.Type == v1alpha1.ConditionReady {
				ready = c.Status == metav1.ConditionTrue && c.ObservedGeneration == sc.Generation
			}
		}
		st, _ := json.Marshal(sc.Status)
		switch {
		case !ready:
			return fmt.Errorf("not Ready: %s", st)
		case sc.Status.Digest != digest:
			return fmt.Errorf("digest %s: %s", sc.Status.Digest, st)
		case version != "" && (sc.Status.Contract == nil || sc.Status.Contract.Version != version):
			return fmt.Errorf("not at version %s: %s", version, st)
		}
		return nil
	})
	return sc
}

// serviceAccountToken creates a ServiceAccount allowed to list
// ServiceContracts in its own namespace (with a Role of its own: not the
// chart's fleet reader) and returns a token for it; with grant false it
// may do nothing at all.
func (s *story) serviceAccountToken(t *testing.T, ns, name string, grant bool) string {
	t.Helper()
	c := s.b.admin()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-contracts"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"servicecontracts"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-contracts"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}
	objs := []client.Object{sa}
	if grant {
		objs = append(objs, role, binding)
	}
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := c.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// headers sends fixed headers on every request.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session over Streamable HTTP.
func connect(t *testing.T, url, token string) *sdk.ClientSession {
	t.Helper()
	h := headers{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return connectWith(t, url, h)
}

// connectWith opens an MCP session over Streamable HTTP sending h.
func connectWith(t *testing.T, url string, h headers) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: h}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubepact-e2e", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and returns its structured answer (text when none).
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	raw, _ := json.Marshal(res)
	if res.IsError {
		t.Fatalf("%s answered an error: %s", tool, raw)
	}
	m, _ := res.StructuredContent.(map[string]any)
	return m, string(raw)
}

// arr is an array field of an answer (nil when absent).
func arr(m map[string]any, key string) []any {
	a, _ := m[key].([]any)
	return a
}

func serviceNames(m map[string]any) []string {
	var out []string
	list, _ := m["services"].([]any)
	for _, sv := range list {
		if sm, ok := sv.(map[string]any); ok {
			out = append(out, fmt.Sprint(sm["name"]))
		}
	}
	slices.Sort(out)
	return out
}

func (s *story) fleetByIdentity(t *testing.T) {
	url := s.b.operatorMCP(t)
	s.aliceTok = s.serviceAccountToken(t, s.shop, "alice", true)
	s.bobTok = s.serviceAccountToken(t, s.billing, "bob", true)
	alice, bob := connect(t, url, s.aliceTok), connect(t, url, s.bobTok)

	for _, tc := range []struct {
		who   string
		cs    *sdk.ClientSession
		total float64
		names []string
	}{
		{"alice (" + s.shop + ")", alice, 2, []string{"catalog", "orders"}},
		{"bob (" + s.billing + ")", bob, 1, []string{"payments"}},
	} {
		eventually(t, tc.who+" sees her namespace's services", 60*time.Second, func() error {
			got, raw := call(t, tc.cs, "pacto_fleet_search", map[string]any{})
			if got["total"] != tc.total || !slices.Equal(serviceNames(got), tc.names) {
				return fmt.Errorf("total %v, services %v; want %v, %v\n%s", got["total"], serviceNames(got), tc.total, tc.names, raw)
			}
			return nil
		})
	}
	// A service alice may not see is answered as one that does not exist:
	// nothing names it or its namespace.
	for _, q := range []string{"payments", "no-such-service"} {
		got, raw := call(t, alice, "pacto_fleet_get", map[string]any{"service": q})
		if got["found"] != false || strings.Contains(raw, s.billing) || q != "payments" && strings.Contains(raw, "payments") {
			t.Errorf("alice: pacto_fleet_get %s: %s; want not found, naming nothing of %s", q, raw, s.billing)
		}
	}
	// Nor do the fleet's status and graph show it: orders' declared
	// dependency on payments is unresolved for alice, as if payments were
	// absent, and no answer carries payments' service key or namespace.
	hiddenKey := "%2Fbundles/payments"
	if _, raw := call(t, alice, "pacto_fleet_status", map[string]any{}); strings.Contains(raw, s.billing) || strings.Contains(raw, hiddenKey) {
		t.Errorf("alice: pacto_fleet_status shows what she may not see: %s", raw)
	}
	graph, raw := call(t, alice, "pacto_fleet_graph", map[string]any{"service": "orders", "transitive": true})
	var nodes, unresolved []string
	for _, n := range arr(graph, "nodes") {
		nodes = append(nodes, fmt.Sprint(n.(map[string]any)["name"]))
	}
	for _, u := range arr(graph, "unresolved") {
		unresolved = append(unresolved, fmt.Sprint(u.(map[string]any)["name"]))
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"catalog", "orders"}) || !slices.Contains(unresolved, "payments") || strings.Contains(raw, s.billing) || strings.Contains(raw, hiddenKey) {
		t.Errorf("alice: pacto_fleet_graph orders: nodes %v, unresolved %v; want catalog and orders, payments unresolved\n%s", nodes, unresolved, raw)
	}
	// alice's catalog: the revision the reconciler pinned.
	eventually(t, "alice's catalog at its digest", 60*time.Second, func() error {
		_, raw := call(t, alice, "pacto_fleet_get", map[string]any{"service": "catalog"})
		if !strings.Contains(raw, s.digests["catalog"]) || !strings.Contains(raw, `Deployment`) {
			return fmt.Errorf("%s", raw)
		}
		return nil
	})
	// A token the API server does not accept gets 401 before MCP.
	for _, tok := range []string{"", "not-a-token", s.aliceTok + "x"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: bearer{tok}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(string(body), "pacto_fleet") {
			t.Errorf("token %q: %d %q %s; want 401 with a challenge and no tools", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	s.readmeReader(t)
	s.noRBAC(t)
}

// readmeReader runs the README's reach commands: the fleet-reader
// ServiceAccount bound to the chart's ClusterRole in shop, its token, and
// the MCP client configured with them — which then sees shop's fleet.
func (s *story) readmeReader(t *testing.T) {
	s.sh.run(t, "reach", repoRoot(), nil, nil)
	if s.sh.exported(t, "KUBEPACT_TOKEN") == "" {
		t.Fatal("the README's token command exported an empty KUBEPACT_TOKEN")
	}
	cfg := parseClaudeAdd(t, s.sh.claudeArgs(t))
	if !strings.HasPrefix(cfg.headers["Authorization"], "Bearer ") || len(cfg.headers["Authorization"]) < len("Bearer ")+20 {
		t.Fatalf("the README configures the MCP client with headers %v; want Authorization: Bearer <the token>", cfg.headers)
	}
	url := s.b.mcpURL(t, cfg.url)
	reader := connectWith(t, url, cfg.headers)
	eventually(t, "the README's fleet-reader sees shop's services", 60*time.Second, func() error {
		got, raw := call(t, reader, "pacto_fleet_search", map[string]any{})
		if got["total"] != float64(2) || !slices.Equal(serviceNames(got), []string{"catalog", "orders"}) || strings.Contains(raw, "NO_VISIBLE_SCOPE") {
			return fmt.Errorf("total %v, services %v; want catalog and orders\n%s", got["total"], serviceNames(got), raw)
		}
		return nil
	})
	// The client inside most editors, configured as the README says,
	// accepts the operator's fleet tools and their answers.
	if !tsClient(t, "operator /mcp as the README's fleet-reader", url, cfg.headers, []tsCall{
		{Tool: "pacto_fleet_search", Args: map[string]any{}, Expect: "ok"},
		{Tool: "pacto_fleet_get", Args: map[string]any{"service": "catalog"}, Expect: "ok"},
		{Tool: "pacto_fleet_status", Args: map[string]any{}, Expect: "ok"},
	}) {
		t.Logf("%s is not set: the TypeScript SDK client was not run (make test-e2e runs it)", clientsDirEnv)
	}
}

// noRBAC: a real token of an identity that may do nothing gets empty
// answers that say why — never an empty fleet that reads like an empty
// cluster — and nothing of the fleet.
func (s *story) noRBAC(t *testing.T) {
	nobody := connect(t, s.b.operatorMCP(t), s.serviceAccountToken(t, s.shop, "nobody", false))
	for _, tool := range []string{"pacto_fleet_search", "pacto_fleet_status"} {
		got, raw := call(t, nobody, tool, map[string]any{})
		meta, _ := got["meta"].(map[string]any)
		lims := arr(meta, "limitations")
		var last map[string]any
		if len(lims) > 0 {
			last, _ = lims[len(lims)-1].(map[string]any)
		}
		msg := fmt.Sprint(last["message"])
		if got["total"] != float64(0) || meta["completeness"] != "partial" || last["code"] != "NO_VISIBLE_SCOPE" ||
			!strings.Contains(msg, "none of the namespaces") || !strings.Contains(msg, "--clusterrole=kubepact-fleet-reader") {
			t.Errorf("a token with no RBAC: %s answered %s; want nothing, partial, ending with NO_VISIBLE_SCOPE naming the ClusterRole to bind", tool, raw)
		}
		for _, hidden := range []string{"catalog", "orders", "payments", s.billing} {
			if strings.Contains(strings.ReplaceAll(raw, msg, ""), hidden) {
				t.Errorf("a token with no RBAC: %s shows %s: %s", tool, hidden, raw)
			}
		}
	}
}

// upgrade runs the README's upgrade over the earlier install: the new
// version's image pushed, the CRDs applied server-side over the ones helm
// created (a real change: status.pods and more are new), and helm upgrade
// to the digest it printed. The operator then runs the new image, the CRD
// has the new fields, and the contracts are Ready again.
func (s *story) upgrade(t *testing.T) {
	if why := s.b.cannotInstall(); why != "" {
		t.Skipf("README upgrade: not run on this back end: %s", why)
	}
	// The earlier CRD has no status.toolSurfaceDigest: the API server
	// pruned what the operator wrote there.
	sc := &v1alpha1.ServiceContract{}
	if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: s.shop, Name: "catalog"}, sc); err != nil {
		t.Fatal(err)
	}
	if sc.Status.ToolSurfaceDigest != "" {
		t.Fatalf("before the upgrade catalog's status holds toolSurfaceDigest %s, which the earlier CRD does not declare", sc.Status.ToolSurfaceDigest)
	}
	s.b.beforeUpgrade(t)
	s.sh.run(t, "upgrade", repoRoot(), []string{"VERSION=" + imageVersions[1], "LOCALBIN=" + t.TempDir()}, nil)
	if fields := crdStatusFields(t, s.b.admin()); !slices.Contains(fields, "pods") || !slices.Contains(fields, "toolSurfaceDigest") || !slices.Contains(fields, "toolSurfaces") {
		t.Fatalf("after the README's upgrade the CRD's status has %v; want the chart's (pods, toolSurfaceDigest, toolSurfaces, …)", fields)
	}
	d := &appsv1.Deployment{}
	if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; !strings.Contains(img, ":"+imageVersions[1]+"@") {
		t.Fatalf("after helm upgrade the operator's image is %s; want the new version %s by digest", img, imageVersions[1])
	}
	s.b.upgraded(t)
	s.b.waitOperatorReady(t)
	if out := run(t, nil, s.b.cli(t), "version"); !strings.Contains(out, imageVersions[1]) {
		t.Errorf("the upgraded image's kubepact version says %q; want %s", out, imageVersions[1])
	}
	for name, ns := range map[string]string{"catalog": s.shop, "orders": s.shop, "payments": s.billing} {
		s.waitReady(t, ns, name, s.digests[name], "")
	}
	// The new fields are kept now: a surface per tool mode, mode all's
	// also in toolSurfaceDigest.
	eventually(t, "catalog's status.toolSurfaceDigest and toolSurfaces under the upgraded CRD", 60*time.Second, func() error {
		if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: s.shop, Name: "catalog"}, sc); err != nil {
			return err
		}
		if sc.Status.ToolSurfaceDigest == "" || len(sc.Status.ToolSurfaces) != 3 {
			return errNotYet
		}
		return nil
	})
	if all := sc.Status.ToolSurfaces[0]; all.Mode != "all" || all.Digest != sc.Status.ToolSurfaceDigest {
		t.Errorf("catalog's status.toolSurfaces %+v: want mode all first, with toolSurfaceDigest %s", sc.Status.ToolSurfaces, sc.Status.ToolSurfaceDigest)
	}
}

// injectedSidecar is the native sidecar the webhook added to pod; its
// declared ports and probes must be the ones its arguments serve.
func injectedSidecar(t *testing.T, pod *corev1.Pod) corev1.Container {
	t.Helper()
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		if len(c.Args) == 0 || c.Args[0] != "sidecar" {
			t.Fatalf("Pod %s: native sidecar %s runs %q, want `kubepact sidecar`", pod.Name, c.Name, c.Args)
		}
		args := &flagLine{args: c.Args[1:]}
		ports := map[string]string{}
		for _, p := range c.Ports {
			ports[p.Name] = fmt.Sprint(p.ContainerPort)
		}
		port, _ := args.get("--port")
		health, _ := args.get("--health-addr")
		_, healthPort, _ := strings.Cut(health, ":")
		if ports["mcp"] != port || ports["kubepact-probes"] != healthPort {
			t.Errorf("sidecar ports %v, args --port=%s --health-addr=%s: declared and served ports differ", ports, port, health)
		}
		if c.StartupProbe == nil || c.StartupProbe.HTTPGet == nil || c.StartupProbe.HTTPGet.Port.String() != healthPort {
			t.Errorf("sidecar startupProbe %+v does not probe the health port %s", c.StartupProbe, healthPort)
		}
		return c
	}
	t.Fatalf("Pod %s has no native sidecar; init containers %+v", pod.Name, pod.Spec.InitContainers)
	return corev1.Container{}
}

// podWithBundle waits for a Pod of the catalog Deployment whose injected
// bundle is digest.
func (s *story) podWithBundle(t *testing.T, digest string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "a catalog Pod injected with "+digest, 90*time.Second, func() error {
		pods := &corev1.PodList{}
		if err := s.b.admin().List(t.Context(), pods, client.InNamespace(s.shop), client.MatchingLabels{"app": "catalog"}); err != nil {
			return err
		}
		var seen []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && strings.HasSuffix(p.Annotations[annotationInjectedBundle], "@"+digest) {
				pod = p
				return nil
			}
			seen = append(seen, p.Name+"="+p.Annotations[annotationInjectedBundle])
		}
		return fmt.Errorf("pods: %v", seen)
	})
	return pod
}

// deploymentGetsSidecar runs the README's inject commands (the namespace
// labelled, the contract named on catalog's Pod template) and scales
// catalog up: its Pod gets the sidecar.
func (s *story) deploymentGetsSidecar(t *testing.T) {
	s.sh.run(t, "inject", repoRoot(), nil, nil)
	c := s.b.admin()
	ns := &corev1.Namespace{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: s.shop}, ns); err != nil || ns.Labels[labelInjection] != "enabled" {
		t.Fatalf("after the README's inject commands namespace %s has labels %v (%v); want %s=enabled", s.shop, ns.Labels, err, labelInjection)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: s.shop, Name: "catalog"}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Annotations[annotationContract]; got != "catalog" {
		t.Fatalf("after the README's inject commands catalog's Pod template names contract %q; want catalog", got)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](1)
	if err := c.Patch(t.Context(), d, patch); err != nil {
		t.Fatal(err)
	}
	s.catalogPod = s.podWithBundle(t, s.digests["catalog"])
	sc := injectedSidecar(t, s.catalogPod)
	_, pull := s.b.registry()
	if want := "--bundle=oci://" + pull + "/bundles/catalog@" + s.digests["catalog"]; !slices.Contains(sc.Args, want) {
		t.Errorf("sidecar args %q lack %s", sc.Args, want)
	}
	t.Logf("Pod %s: sidecar %s %q", s.catalogPod.Name, sc.Image, sc.Args)
}

func (s *story) sidecarCallsService(t *testing.T) {
	before := s.b.served()
	url := s.b.sidecar(t, s.catalogPod)
	cs := connect(t, url, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "listProducts") {
		t.Fatalf("the sidecar's tools %v lack listProducts", names)
	}
	_, raw := call(t, cs, "listProducts", map[string]any{"limit": 2})
	// The seed products exist only in the demo service.
	if !strings.Contains(raw, `"sku":"LMP-3"`) {
		t.Errorf("listProducts through the sidecar: %s; want the demo service's products", raw)
	}
	if before >= 0 && s.b.served() <= before {
		t.Errorf("the demo service served no request during the call (%d before, %d after)", before, s.b.served())
	}
	// The client inside most editors accepts the sidecar's tools and
	// answers too.
	if !tsClient(t, "sidecar "+s.catalogPod.Name, url, nil, []tsCall{{Tool: "listProducts", Args: map[string]any{"limit": 2}, Expect: "ok"}}) {
		t.Logf("%s is not set: the TypeScript SDK client was not run (make test-e2e runs it)", clientsDirEnv)
	}
}

func (s *story) tagMoved(t *testing.T) {
	// catalog 1.4.1 pushed over the tag the contract follows.
	dir := t.TempDir()
	src := filepath.Join(repoRoot(), "examples", "bundles", "catalog")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "pacto.yaml")
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(raw), "version: 1.4.0", "version: 1.4.1", 1)
	if moved == string(raw) {
		t.Fatal("examples/bundles/catalog/pacto.yaml has no `version: 1.4.0` to move")
	}
	if err := os.WriteFile(manifest, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	s.catalogMoved = s.push(t, dir, "bundles/catalog:e2e")
	if s.catalogMoved == s.digests["catalog"] {
		t.Fatalf("the moved tag has the old digest %s", s.catalogMoved)
	}
	// Resolve now, not after the interval: a spec change makes the
	// reconciler look at the tag (`kubectl patch … interval`).
	c := s.b.admin()
	sc := &v1alpha1.ServiceContract{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: s.shop, Name: "catalog"}, sc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(sc.DeepCopy())
	sc.Spec.Interval = &metav1.Duration{Duration: 31 * time.Second}
	if err := c.Patch(t.Context(), sc, patch); err != nil {
		t.Fatal(err)
	}
	got := s.waitReady(t, s.shop, "catalog", s.catalogMoved, "1.4.1")
	if _, pull := s.b.registry(); got.Status.ResolvedRef != pull+"/bundles/catalog:e2e@"+s.catalogMoved {
		t.Errorf("resolvedRef %s, want the tag at %s", got.Status.ResolvedRef, s.catalogMoved)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == v1alpha1.ConditionBundleResolved && c.Reason != v1alpha1.ReasonTagMoved {
			t.Errorf("BundleResolved reason %s, want %s", c.Reason, v1alpha1.ReasonTagMoved)
		}
	}

	// The running Pod is still on the old bundle: the status says so.
	s.waitPods(t, func(p *v1alpha1.PodsStatus) error {
		for _, d := range p.Digests {
			if d.Digest == s.digests["catalog"] && !d.Current && d.Count > 0 && p.Stale > 0 {
				return nil
			}
		}
		return fmt.Errorf("want the Pod on %s listed as stale", s.digests["catalog"])
	})

	// The fleet follows: alice's catalog is the new revision.
	alice := connect(t, s.b.operatorMCP(t), s.aliceTok)
	eventually(t, "the fleet's catalog at the moved digest", 60*time.Second, func() error {
		_, raw := call(t, alice, "pacto_fleet_get", map[string]any{"service": "catalog"})
		if !strings.Contains(raw, s.catalogMoved) || !strings.Contains(raw, "1.4.1") {
			return fmt.Errorf("%s", raw)
		}
		return nil
	})
	// New Pods get the new digest (`kubectl rollout restart`).
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: s.shop, Name: "catalog"}, d); err != nil {
		t.Fatal(err)
	}
	dpatch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().UTC().Format(time.RFC3339)
	if err := c.Patch(t.Context(), d, dpatch); err != nil {
		t.Fatal(err)
	}
	pod := s.podWithBundle(t, s.catalogMoved)
	// The new Pod is listed under the current digest, first. (The old one
	// stays until the new one is Ready, which needs a kubelet: on envtest
	// it stays, listed as stale.)
	s.waitPods(t, func(p *v1alpha1.PodsStatus) error {
		if len(p.Digests) == 0 || p.Digests[0].Digest != s.catalogMoved || !p.Digests[0].Current || !slices.Contains(p.Digests[0].Pods, pod.Name) {
			return fmt.Errorf("want Pod %s listed first, under the current digest %s", pod.Name, s.catalogMoved)
		}
		return nil
	})
}

// waitPods waits until the catalog contract's status.pods passes ok.
func (s *story) waitPods(t *testing.T, ok func(*v1alpha1.PodsStatus) error) {
	t.Helper()
	eventually(t, "catalog's status.pods", 60*time.Second, func() error {
		sc := &v1alpha1.ServiceContract{}
		if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: s.shop, Name: "catalog"}, sc); err != nil {
			return err
		}
		if sc.Status.Pods == nil {
			return errors.New("status.pods is empty")
		}
		if err := ok(sc.Status.Pods); err != nil {
			return fmt.Errorf("%w; status.pods %+v", err, *sc.Status.Pods)
		}
		return nil
	})
}

// uninstall runs the README's uninstall commands; nothing of kubepact is
// left.
func (s *story) uninstall(t *testing.T) {
	s.sh.run(t, "uninstall", repoRoot(), nil, func(cmd, _ string) {
		if strings.HasPrefix(cmd, "helm uninstall ") {
			s.b.operatorGone(t)
		}
	})
	assertNothingLeft(t, s.b.admin(), s.installed)
	// The apps stay, now without injection: a new Pod is admitted as is.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.shop, Name: "after-uninstall", Annotations: map[string]string{annotationContract: "catalog"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{s.b.demoContainer(t)}},
	}
	if err := s.b.admin().Create(t.Context(), pod, client.DryRunAll); err != nil || len(pod.Spec.InitContainers) != 0 {
		t.Errorf("a Pod after uninstall: %v, init containers %+v; want admitted without a sidecar", err, pod.Spec.InitContainers)
	}
	for _, ns := range []string{s.shop, s.billing} {
		if err := s.b.admin().Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	}
}
