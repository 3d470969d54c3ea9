//go:build !sidecaronly

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestOperatorMCPDialsNothingACallerNames runs the operator against
// envtest's real API server and asks its /mcp, as a ServiceAccount with no
// RBAC at all and as one that may read the contract's namespace, with a
// foreign host's registry reference (oci://127.0.0.2:PORT/…, a listener
// that counts what connects) in every string argument of every tool, and
// then the same with that port closed. Nothing connects, the answers for
// the open and the closed port are the same bytes, and pacto_impact's
// refs are refused naming what is accepted. A digest of a revision the
// caller may not see answers exactly as an unknown one; the reader reads
// the revision the reconciler resolved by name@version or digest.
//
// The foreign host is even named in --allowed-registries: the refusal is
// the fleet-only rule of /mcp, not the registry policy.
//
// The operator runs without --plain-http, its contract's registry serving
// HTTPS (trusted through SSL_CERT_FILE); a second contract, on a registry
// that speaks plain HTTP, then shows in its status the sentence saying to
// pass --plain-http, not the transport's text.
func TestOperatorMCPDialsNothingACallerNames(t *testing.T) {
	admin, _, kubeconfigFile := operatorCluster(t, "kubepact-operator-registry-test")

	reg := testregistry.New(t, &testregistry.Options{TLS: true})
	t.Setenv("SSL_CERT_FILE", reg.CertFile) // for the processes below
	ref := reg.Host + "/bundles/catalog:1.4.0"
	catalogDir := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	out, stderr, code := runKubepact(t, "push", catalogDir, "oci://"+ref)
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	pushed := strings.TrimSpace(out)
	plain := testregistry.New(t, nil)
	plainRef := plain.Host + "/bundles/catalog:1.4.0"
	if _, stderr, code := runKubepact(t, "push", catalogDir, "oci://"+plainRef, "--plain-http"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}

	// The contract and its workload, in a namespace of its own.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shop-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "catalog"}
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/catalog:1"}}}}}},
		&v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"}, Spec: v1alpha1.ServiceContractSpec{
			Bundle: v1alpha1.BundleSource{OCI: "oci://" + ref}, TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "catalog"}}},
	} {
		if err := admin.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}

	// The foreign host: an open port that counts connections.
	foreign, accepted := countConns(t, "127.0.0.2:0")
	foreignRef := "oci://" + foreign.Addr().String() + "/acme/orders:1.0.0"

	op := startOperator(t, kubeconfigFile,
		"--allowed-registries", reg.Host+","+plain.Host+","+foreign.Addr().String(),
		"--graceful-shutdown-timeout", "5s", "--log-format", "json")
	mcpAddr, logs := op.mcpAddr, op.logs

	// Two identities: one with no RBAC at all, one that may list
	// ServiceContracts in the contract's namespace.
	nobody := serviceAccountToken(t, admin, ns.Name, "nobody", false)
	reader := serviceAccountToken(t, admin, ns.Name, "reader", true)
	connectAs := func(token string) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "hostile", Version: "v0"}, nil).Connect(t.Context(),
			&sdk.StreamableClientTransport{Endpoint: "http://" + mcpAddr + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: bearerTransport{token: token}}}, nil)
		if err != nil {
			t.Fatalf("connecting to /mcp: %v\n%s", err, logs.String())
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}

	// Wait until the reader's fleet holds the reconciled revision with its
	// bundle read: the snapshot is then quiet.
	readerCS := connectAs(reader)
	for deadline := time.Now().Add(90 * time.Second); ; {
		got := toolAnswer(t, readerCS, "pacto_fleet_get", map[string]any{"service": "catalog"})
		if strings.Contains(got, `"digest":"`+pushed+`"`) && strings.Contains(got, ":openapi:") && strings.Contains(got, `"completeness":"complete"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader's fleet never held the reconciled revision: %s\n%s", got, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	nobodyCS := connectAs(nobody)
	sessions := map[string]*sdk.ClientSession{"no RBAC": nobodyCS, "reader": readerCS}

	// Every string argument of every tool gets the foreign reference; the
	// required ones besides it a fleet name.
	type probe struct {
		who, tool, arg string
		args           map[string]any
	}
	var probes []probe
	for tl, err := range nobodyCS.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tl.Name, "pacto_fleet_") && tl.Name != "pacto_impact" && tl.Name != "pacto_server_info" {
			t.Errorf("/mcp offers %s: the operator serves the fleet tools only", tl.Name)
		}
		schema, _ := json.Marshal(tl.InputSchema)
		var in struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(schema, &in); err != nil {
			t.Fatal(err)
		}
		for name, p := range in.Properties {
			if p.Type != "string" {
				continue
			}
			args := map[string]any{name: foreignRef}
			for _, r := range in.Required {
				if r != name {
					args[r] = "catalog"
				}
			}
			for who := range sessions {
				probes = append(probes, probe{who, tl.Name, name, args})
			}
		}
	}
	slices.SortFunc(probes, func(a, b probe) int { return strings.Compare(a.who+a.tool+a.arg, b.who+b.tool+b.arg) })
	if !slices.ContainsFunc(probes, func(p probe) bool { return p.tool == "pacto_impact" && p.arg == "new_ref" }) {
		t.Fatalf("no probe of pacto_impact's new_ref among %d", len(probes))
	}
	round := func() []string {
		var out []string
		for _, p := range probes {
			got := toolAnswer(t, sessions[p.who], p.tool, p.args)
			// new_ref is reached only when old_ref resolves: for the reader.
			if p.tool == "pacto_impact" && (p.arg == "old_ref" || p.arg == "new_ref" && p.who == "reader") &&
				(!strings.Contains(got, `"code":"INVALID_ARGUMENT"`) || !strings.Contains(got, `"field":"`+p.arg+`"`) ||
					!strings.Contains(got, "only fleet revisions are read here") || !strings.Contains(got, "got an oci:// reference")) {
				t.Errorf("%s: pacto_impact %v: %s; want INVALID_ARGUMENT on %s naming what is accepted", p.who, p.args, got, p.arg)
			}
			out = append(out, got)
		}
		return out
	}
	open := round()
	_ = foreign.Close()
	closed := round()
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections reached the foreign host %s through /mcp, want 0", n, foreign.Addr())
	}
	for i, p := range probes {
		if open[i] != closed[i] {
			t.Errorf("%s: %s %s: the answer for an open port is not the one for a closed port:\nopen:   %s\nclosed: %s", p.who, p.tool, p.arg, open[i], closed[i])
		}
	}
	t.Logf("%d probes, two rounds, %d connections", len(probes), accepted.Load())

	// A digest of a revision the caller may not see answers as an unknown
	// digest; the reader reads the resolved revision by name@version or
	// by digest.
	unknown := "sha256:" + strings.Repeat("0", 64)
	hidden := toolAnswer(t, nobodyCS, "pacto_impact", map[string]any{"old_ref": pushed, "new_ref": pushed})
	absent := toolAnswer(t, nobodyCS, "pacto_impact", map[string]any{"old_ref": unknown, "new_ref": unknown})
	if hidden != absent || !strings.Contains(hidden, `"code":"NOT_FOUND"`) {
		t.Errorf("a hidden revision's digest: %s\nan unknown digest: %s\nwant the same NOT_FOUND", hidden, absent)
	}
	if got := toolAnswer(t, readerCS, "pacto_impact", map[string]any{"old_ref": "catalog@1.4.0", "new_ref": pushed}); !strings.Contains(got, `"classification":"NON_BREAKING"`) {
		t.Errorf("the reader's impact of the resolved revision on itself: %s", got)
	}
	if got := toolAnswer(t, readerCS, "pacto_impact", map[string]any{"old_ref": "/etc/passwd", "new_ref": "catalog"}); !strings.Contains(got, "got a local path") {
		t.Errorf("a local path: %s, want it refused", got)
	}
	// A request declaring a body larger than /mcp's tools need (64 KiB by
	// default here) is refused before its body is read: no identity makes
	// the operator hold megabytes per request.
	if got := unsentBodyAnswer(t, mcpAddr, nobody, 1<<20); !strings.Contains(got, " 413 ") {
		t.Errorf("the no-RBAC identity's request of 1 MiB whose body was not sent: %q, want 413 at once", got)
	}

	// A contract on a plain-HTTP registry, the operator speaking HTTPS:
	// status says what to do, in our words; the log keeps the rest.
	legacy := &v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "legacy"}, Spec: v1alpha1.ServiceContractSpec{
		Bundle: v1alpha1.BundleSource{OCI: "oci://" + plainRef}, TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "catalog"}}}
	if err := admin.Create(t.Context(), legacy); err != nil {
		t.Fatal(err)
	}
	want := "registry " + plain.Host + " answered over plain HTTP: pass --plain-http (registry.plainHTTP in the chart) if that registry is trusted"
	for deadline := time.Now().Add(60 * time.Second); ; {
		got := &v1alpha1.ServiceContract{}
		if err := admin.Get(t.Context(), client.ObjectKeyFromObject(legacy), got); err != nil {
			t.Fatal(err)
		}
		var msg string
		for _, c := range got.Status.Conditions {
			if c.Type == v1alpha1.ConditionBundleResolved {
				msg = c.Message
			}
		}
		if msg != "" {
			if !strings.Contains(msg, want) {
				t.Errorf("BundleResolved: %q, want it to say %q", msg, want)
			}
			noRawText(t, "BundleResolved", msg)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no BundleResolved condition on %s: %+v\n%s", legacy.Name, got.Status, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "first record does not look like a TLS handshake"); {
		if time.Now().After(deadline) {
			t.Fatalf("the operator's log does not keep the failure as reported:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unsentBodyAnswer sends /mcp at addr the headers of a POST declaring a
// body of n bytes, as token, sends one byte of it, and returns the status
// line answered: a server that reads the body first never answers.
func unsentBodyAnswer(t *testing.T, addr, token string, n int) string {
	t.Helper()
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", addr, token, n)
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "no answer: " + err.Error()
	}
	return line
}

// toolAnswer calls a tool and returns the whole result as JSON: what a
// caller learns from it.
func toolAnswer(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// serviceAccountToken creates a ServiceAccount in ns, bound (when canList)
// to a Role that may list ServiceContracts there, and returns a token for
// it from the TokenRequest API.
func serviceAccountToken(t *testing.T, admin client.Client, ns, name string, canList bool) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	objs := []client.Object{sa}
	if canList {
		objs = append(objs,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"list"}}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}})
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
