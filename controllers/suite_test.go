package controllers_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/test/kcm"
)

// The package's control plane: one real kube-apiserver and etcd for all
// tests, and one manager running the reconciler as the operator's
// ServiceAccount, bound to the ClusterRole `make manifests` generated.
// (The webhook's tests run on a control plane of their own, in
// controllers/injection.)
var (
	// admin is a client with the test's full authority, for setting up.
	admin client.Client
	// adminConfig is the rest.Config of admin.
	adminConfig *rest.Config
	// operatorConfig is the rest.Config the manager runs with: the
	// operator's ServiceAccount, impersonated.
	operatorConfig *rest.Config
	scheme         = runtime.NewScheme()
	skipReason     string
)

const (
	operatorNamespace = "kubepact-system"
	operatorSA        = "kubepact-operator"
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// benchmarking reports whether -test.bench asks for benchmarks.
func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

func runMain(m *testing.M) int {
	flag.Parse()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("USE_EXISTING_CLUSTER") != "true" {
		skipReason = "KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>"
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		_ = os.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		// KUBEBUILDER_ASSETS was set: an unusable control plane is a failure.
		fmt.Fprintf(os.Stderr, "envtest: starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "envtest: stopping the control plane: %v\n", err)
		}
	}()
	defer stopKCM()
	adminConfig = cfg
	admin, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background()) //nolint:forbidigo // TestMain has no t.Context
	defer cancel()
	if err := installRBAC(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "installing config/rbac: %v\n", err)
		return 1
	}
	operatorConfig = rest.CopyConfig(cfg)
	operatorConfig.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + operatorNamespace + ":" + operatorSA}
	operatorConfig.QPS = -1 // as ctrl.GetConfig: API priority and fairness, no client-side limit
	if benchmarking() {
		// The benchmark runs its own manager over its own objects.
		return m.Run()
	}
	cacheDir, err := os.MkdirTemp("", "kubepact-controllers-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cache dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(cacheDir)
	mgr, err := ctrl.NewManager(operatorConfig, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        "kubepact-operator",
		LeaderElectionNamespace: operatorNamespace,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		return 1
	}
	r := &controllers.ServiceContractReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(controllers.ControllerName),
		Options:   controllers.ReconcilerOptions{Registry: oci.Options{PlainHTTP: true, CacheDir: cacheDir, AllowedRegistries: []string{"127.0.0.1"}}, MaxConcurrentReconciles: 4},
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		fmt.Fprintf(os.Stderr, "setup: %v\n", err)
		return 1
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-mgrDone; err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// installRBAC applies config/rbac (ServiceAccount, the generated
// ClusterRole, bindings, leader-election Role) as the operator's install
// would.
func installRBAC(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if err := admin.Create(ctx, ns); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join("..", "config", "rbac", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("%s: %w", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := admin.Create(ctx, u); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

func needControlPlane(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// newNamespace creates a namespace for one test.
func newNamespace(t testing.TB) string {
	t.Helper()
	needControlPlane(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sc-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func createDeployment(t testing.TB, ns, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
			},
		},
	}
	if err := admin.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

func newContract(ns, name, ref, target string) *v1alpha1.ServiceContract {
	return &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ServiceContractSpec{
			Bundle:    v1alpha1.BundleSource{OCI: ref},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: target},
		},
	}
}

func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := admin.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// update applies change to the latest copy of the ServiceContract.
func update(t *testing.T, key client.ObjectKey, change func(*v1alpha1.ServiceContract)) {
	t.Helper()
	for range 10 {
		sc := &v1alpha1.ServiceContract{}
		if err := admin.Get(t.Context(), key, sc); err != nil {
			t.Fatal(err)
		}
		change(sc)
		err := admin.Update(t.Context(), sc)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatalf("updating %s: conflicts", key)
}

// waitFor polls the ServiceContract until cond holds for it, and returns it.
// The deadline bounds a hung reconciler; it measures nothing.
func waitFor(t *testing.T, key client.ObjectKey, what string, cond func(*v1alpha1.ServiceContract) bool) *v1alpha1.ServiceContract {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	sc := &v1alpha1.ServiceContract{}
	for {
		if err := admin.Get(t.Context(), key, sc); err != nil {
			t.Fatal(err)
		}
		if cond(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: waited 60s for %s; status: %s", key, what, describe(sc))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(sc *v1alpha1.ServiceContract) string {
	var b strings.Builder
	fmt.Fprintf(&b, "generation=%d observed=%d digest=%q ref=%q", sc.Generation, sc.Status.ObservedGeneration, sc.Status.Digest, sc.Status.ResolvedRef)
	for _, c := range sc.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s (gen %d)", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	for _, f := range sc.Status.Findings {
		fmt.Fprintf(&b, "\n  finding %s %s %s: %s", f.Severity, f.Code, f.Path, f.Message)
	}
	return b.String()
}

// condition returns the condition's status and reason ("" when absent).
func condition(sc *v1alpha1.ServiceContract, typ string) (metav1.ConditionStatus, string) {
	for _, c := range sc.Status.Conditions {
		if c.Type == typ {
			return c.Status, c.Reason
		}
	}
	return "", ""
}

// readyForWait is what `kubectl wait --for=condition=Ready` accepts: the
// Ready condition True, observed at the object's current generation.
func readyForWait(sc *v1alpha1.ServiceContract) bool {
	for _, c := range sc.Status.Conditions {
		if c.Type == v1alpha1.ConditionReady {
			return c.Status == metav1.ConditionTrue && c.ObservedGeneration == sc.Generation
		}
	}
	return false
}

// events lists the Events (events.k8s.io) regarding a ServiceContract.
func eventReasons(t *testing.T, ns, name string) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := admin.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Regarding.Kind == v1alpha1.ServiceContractKind {
			out = append(out, e.Reason)
		}
	}
	return out
}

// flakyProxy is a TCP proxy on loopback in front of a registry that can be
// taken down (every connection is cut, new ones closed at once) and brought
// back, on the same address.
type flakyProxy struct {
	ln      net.Listener
	backend string
	mu      sync.Mutex
	down    bool
	conns   map[net.Conn]struct{}
}

func newFlakyProxy(t *testing.T, backend string) *flakyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go p.serve()
	return p
}

func (p *flakyProxy) addr() string { return p.ln.Addr().String() }

func (p *flakyProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *flakyProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *flakyProxy) pipe(c net.Conn) {
	defer c.Close()
	b, err := net.Dial("tcp", p.backend)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.conns[b] = struct{}{}
	p.mu.Unlock()
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
}

func workload(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// The kube-controller-manager of the package's control plane (Deployments
// become ReplicaSets and Pods), started by the first test that needs it.
var (
	kcmOnce sync.Once
	kcmProc *kcm.Process
	kcmErr  error
)

func needKCM(t *testing.T) {
	t.Helper()
	needControlPlane(t)
	kcmOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) //nolint:forbidigo // outlives the first test that asks
		defer cancel()
		kcmProc, kcmErr = kcm.Start(ctx, adminConfig, nil)
	})
	if kcmErr != nil {
		t.Fatal(kcmErr)
	}
}

func stopKCM() {
	if kcmProc != nil {
		_ = kcmProc.Stop()
	}
}
