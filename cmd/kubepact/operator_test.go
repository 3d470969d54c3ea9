//go:build !sidecaronly

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestOperatorRefusesBadFlags: a bad flag is a clear error (exit 2) before
// anything connects to a cluster.
func TestOperatorRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-concurrent-reconciles", "0"}, "use 1 to 64"},
		{[]string{"--namespace", "a,,b"}, "empty namespace"},
		{[]string{"--graceful-shutdown-timeout", "-1s"}, "negative"},
		{[]string{"--listen", "0.0.0.0", "--mcp-auth", "none"}, "--auth-token-file"},
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}, "--kubeconfig"},
		// The registry group is the one every command binds; the operator
		// takes credentials only from each object's pull Secret.
		{[]string{"--registry-config", filepath.Join(t.TempDir(), "config.json")}, "the operator does not accept --registry-config: it takes registry credentials only from each ServiceContract's spec.pullSecretRef"},
		{[]string{"--registry-secret-file", filepath.Join(t.TempDir(), "secret.json")}, "the operator does not accept --registry-secret-file"},
		{[]string{"--max-entries", "0"}, "--max-entries 0: want a positive number"},
		{[]string{"--mcp-auth", "oidc"}, "--mcp-auth \"oidc\" is not accepted"},
		{[]string{"--mcp-auth", "token"}, "needs --auth-token-file"},
		{[]string{"--auth-token-file", "/dev/null", "--mcp-auth", "kubernetes"}, "pass one or the other"},
		// The expensive calls' budget: one caller's share cannot exceed the
		// whole, and a call cannot hold more than its caller may.
		{[]string{"--max-expensive-calls", "2", "--max-expensive-calls-per-caller", "3"}, "--max-expensive-calls-per-caller 3: want 1..2 (--max-expensive-calls)"},
		{[]string{"--max-bundle-memory", "1048576", "--max-call-bundle-memory", "2097152"}, "--max-call-bundle-memory 2.0 MiB is more than one caller may hold"},
		{[]string{"--expensive-call-timeout", "-1s"}, "--expensive-call-timeout must not be negative"},
	} {
		_, stderr, code := runKubepact(t, append([]string{"operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("operator %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// countFiles counts the regular files below dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOperatorProcess runs the built `kubepact operator` as a process against
// a real kube-apiserver and etcd (envtest) and a real OCI registry on
// loopback, as a cluster would run it: probes, metrics, a ServiceContract
// reconciled to Ready, and a clean stop on SIGTERM.
func TestOperatorProcess(t *testing.T) {
	admin, _, kubeconfigFile := operatorCluster(t, "kubepact-operator-test")

	// A bundle in a real registry, pushed by the binary itself.
	reg := testregistry.New(t, nil)
	ref := reg.Host + "/bundles/catalog:1.4.0"
	out, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "oci://"+ref, "--plain-http")
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	pushed := strings.TrimSpace(out)
	if !strings.HasPrefix(pushed, "sha256:") {
		t.Fatalf("push printed %q, want a digest", pushed)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "op-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "catalog"}
	if err := admin.Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/catalog:1"}}},
			},
		},
	}); err != nil {
		t.Fatal(err)
	}
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"},
		Spec: v1alpha1.ServiceContractSpec{
			Bundle:    v1alpha1.BundleSource{OCI: "oci://" + ref},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "catalog"},
		},
	}
	if err := admin.Create(t.Context(), sc); err != nil {
		t.Fatal(err)
	}

	// Before any reconcile: kstatus (kubectl wait, Flux and Argo CD health
	// checks) must not read the new object as Current.
	key := client.ObjectKeyFromObject(sc)
	if res := computeStatus(t, admin, key); res.Status != kstatus.InProgressStatus {
		t.Errorf("kstatus of a ServiceContract never reconciled: %s (%s), want InProgress", res.Status, res.Message)
	}

	metricsAddr, cacheDir := freeAddr(t), t.TempDir()
	op := startOperatorWith(t, kubeconfigFile, &operatorStart{metricsAddr: metricsAddr, cacheDir: cacheDir},
		"--plain-http",
		// The registry is on loopback: only a registry named here may be.
		"--allowed-registries", reg.Host,
		"--graceful-shutdown-timeout", "20s",
		"--log-format", "json")
	mcpAddr, logs := op.mcpAddr, op.logs

	// The deadlines below bound a hung process; they measure nothing.
	// startOperator waited for /readyz; /healthz answers too.
	waitHTTP(t, "http://"+op.probeAddr+"/healthz", op.exited, logs)

	// Ready as `kubectl wait --for=condition=Ready` and kstatus read it.
	deadline := time.Now().Add(60 * time.Second)
	for {
		res := computeStatus(t, admin, key)
		if res.Status == kstatus.CurrentStatus {
			break
		}
		if time.Now().After(deadline) || processExited(op.exited) {
			got := &v1alpha1.ServiceContract{}
			_ = admin.Get(t.Context(), key, got)
			st, _ := json.Marshal(got.Status)
			t.Fatalf("%s: kstatus %s (%s), want Current; status %s\noperator log:\n%s", key, res.Status, res.Message, st, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := admin.Get(t.Context(), key, sc); err != nil {
		t.Fatal(err)
	}
	ready := false
	for _, c := range sc.Status.Conditions {
		if c.Type == v1alpha1.ConditionReady {
			ready = c.Status == metav1.ConditionTrue && c.ObservedGeneration == sc.Generation
		}
	}
	if !ready || sc.Status.Digest != pushed || sc.Status.ResolvedRef != ref+"@"+pushed {
		t.Errorf("kstatus Current, but Ready=%v digest %q resolvedRef %q; want Ready at %s", ready, sc.Status.Digest, sc.Status.ResolvedRef, pushed)
	}

	// /mcp refuses a request without a Kubernetes bearer token.
	noToken, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+mcpAddr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	noToken.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(noToken); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("/mcp without a token: %d %q, want 401 with a challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// A ServiceAccount that may list ServiceContracts in the namespace,
	// with a token from the TokenRequest API.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "reader"}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kubepact.dev"}, Resources: []string{"servicecontracts"}, Verbs: []string{"list"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns.Name, Name: "reader"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"}}
	for _, obj := range []client.Object{sa, role, binding} {
		if err := admin.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	if err := admin.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatal(err)
	}

	// /mcp: the live fleet, as an MCP client over HTTP sees it — the
	// contract's revision (the digest the reconciler pinned, its bundle
	// read from the digest cache) and its Deployment as a Compliant target.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "operator-test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: "http://" + mcpAddr + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{token: tr.Status.Token}}}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v\n%s", err, logs.String())
	}
	defer cs.Close()
	deadline = time.Now().Add(30 * time.Second)
	for {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"service": "catalog"}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(res.StructuredContent)
		if s := string(got); strings.Contains(s, `"kind":"Deployment"`) && strings.Contains(s, `"compliance":"Compliant"`) &&
			strings.Contains(s, `"digest":"`+pushed+`"`) && strings.Contains(s, `:openapi:`) && strings.Contains(s, `"completeness":"complete"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/mcp pacto_fleet_get catalog: %s\noperator log:\n%s", got, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// --cache-dir, of the registry group every command shares, reached the
	// reconciler: the pulled bundle is cached by digest.
	if n := countFiles(t, cacheDir); n == 0 {
		t.Errorf("--cache-dir %s is empty after a bundle was pulled", cacheDir)
	}

	// /metrics: controller-runtime's series for our controller, and ours.
	metrics := httpGet(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{
		`controller_runtime_reconcile_total{controller="servicecontract",result="success"}`,
		`workqueue_depth{controller="servicecontract",name="servicecontract"`,
		`kubepact_servicecontract_bundle_resolutions_total{source="oci"}`,
		`kubepact_servicecontract_tag_moves_total`,
		`kubepact_fleet_feed_lag_seconds_count`,
		`kubepact_fleet_snapshot_age_seconds`,
		`kubepact_fleet_feed_up 1`,
		`kubepact_mcp_tool_calls_total{outcome="ok",tool="pacto_fleet_get"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if v := metricValue(metrics, `kubepact_servicecontract_bundle_resolutions_total{source="oci"}`); v < 1 {
		t.Errorf("kubepact_servicecontract_bundle_resolutions_total{source=\"oci\"} = %v after a bundle resolved, want >= 1", v)
	}

	// SIGTERM: a graceful stop, exit 0 (60 s is far past
	// --graceful-shutdown-timeout: a hang).
	if err := op.terminate(t, "after SIGTERM", 60*time.Second); err != nil {
		t.Errorf("operator after SIGTERM: %v; want exit 0\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "operator stopped") {
		t.Errorf("no \"operator stopped\" in the log after SIGTERM:\n%s", logs.String())
	}

	// SIGTERM while starting (right after /healthz, as the caches start):
	// the process must still end, within its bound, and say why if it
	// could not stop cleanly — never spin until SIGKILL.
	early := startOperatorWith(t, kubeconfigFile, &operatorStart{mcpPort: "0", readyPath: "/healthz"},
		"--plain-http", "--allowed-registries", reg.Host,
		"--graceful-shutdown-timeout", "1s",
		"--log-format", "json")
	// 60 s is far past its 1s+5s bound: a hang.
	if err := early.terminate(t, "stopped while starting", 60*time.Second); err != nil && !strings.Contains(early.logs.String(), "did not stop within") {
		t.Errorf("stopped while starting: %v, without saying why\n%s", err, early.logs.String())
	} else {
		t.Logf("operator stopped while starting: exit %v", err)
	}
}

// computeStatus reads the ServiceContract as unstructured, as kubectl and
// GitOps tools do, and computes its kstatus.
func computeStatus(t *testing.T, c client.Client, key client.ObjectKey) *kstatus.Result {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.ServiceContractKind))
	if err := c.Get(t.Context(), key, u); err != nil {
		t.Fatal(err)
	}
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus.Compute: %v", err)
	}
	return res
}

// freeAddr returns a loopback address with a port free at the time of asking.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func processExited(exited chan error) bool {
	select {
	case err := <-exited:
		exited <- err
		return true
	default:
		return false
	}
}

// waitHTTP polls url until it answers 200; it fails at once if the process
// exits meanwhile.
func waitHTTP(t *testing.T, url string, exited chan error, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var last string
		resp, err := http.Get(url) //nolint:noctx // a short poll with a client timeout below would add nothing
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		if processExited(exited) {
			t.Fatalf("operator exited before %s answered 200 (last: %s)\n%s", url, last, logs.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no 200 in 60s (last: %s)\n%s", url, last, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// metricValue returns the value of the series line starting with name
// (with its labels), or -1 when there is none.
func metricValue(exposition, name string) float64 {
	for line := range strings.Lines(exposition) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// startControlPlane starts envtest's kube-apiserver and etcd with the CRDs
// of the directory crdDir names (from the repository root), stopped when
// the test ends. Without KUBEBUILDER_ASSETS the test is skipped; with it,
// an unusable control plane is a failure.
func startControlPlane(t *testing.T, crdDir ...string) (*envtest.Environment, *rest.Config) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>")
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		t.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(logr.Discard())
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(append([]string{repoRoot(t)}, crdDir...)...)},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest: stopping the control plane: %v", err)
		}
	})
	return env, cfg
}

// adminKubeconfig writes a kubeconfig file for a new cluster-admin user
// of env (group system:masters) and returns its path: what a process under
// test is started with.
// operatorCluster starts envtest with the CRDs (config/crd/bases) and
// returns a client with the installer's authority, the API server's
// config, and a kubeconfig file for a system:masters user named user, as
// the operator process is given.
func operatorCluster(t *testing.T, user string) (client.Client, *rest.Config, string) {
	t.Helper()
	env, cfg := startControlPlane(t, "config", "crd", "bases")
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return admin, cfg, adminKubeconfig(t, env, user)
}

func adminKubeconfig(t *testing.T, env *envtest.Environment, name string) string {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(file, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
