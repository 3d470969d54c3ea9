// Package envtestsuite is the one envtest harness of the packages that test
// against a real kube-apiserver and etcd (controllers, controllers/injection,
// mcp/kubeauth): it starts the control plane with the project's CRDs (and,
// when asked, its webhook configuration), installs config/rbac as the
// operator's install would, and holds the helpers those suites share. Each
// suite keeps its own manager and specifics in its own package.
//
// It is for tests only; product code never imports it.
package envtestsuite

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/kcm"
)

// The operator's namespace and ServiceAccount, as config/rbac names them.
const (
	OperatorNamespace = "kubepact-system"
	OperatorSA        = "kubepact-operator"
)

// Options says what control plane a suite wants.
type Options struct {
	// Root is the repository root relative to the test's package
	// directory (".." for controllers, "../.." one level deeper).
	Root string
	// Webhook installs config/webhook/manifests.yaml, the API server
	// calling the webhook on 127.0.0.1 (Env.WebhookInstallOptions says
	// where and with which serving certificate).
	Webhook bool
}

// Suite is one package's control plane: a real kube-apiserver and etcd,
// config/rbac installed, and the clients the tests use. A suite declares
// one (`var suite = new(envtestsuite.Suite)`) and calls its Main from
// TestMain.
type Suite struct {
	// Env is the running envtest environment.
	Env *envtest.Environment
	// Admin is a client with the test's full authority, for setting up.
	Admin client.Client
	// AdminConfig is the rest.Config of Admin.
	AdminConfig *rest.Config
	// OperatorConfig is the operator's ServiceAccount, impersonated, as a
	// manager runs with it.
	OperatorConfig *rest.Config
	// Scheme has client-go's types and the project's API.
	Scheme *runtime.Scheme

	skipReason string

	kcmOnce sync.Once
	kcmProc *kcm.Process
	kcmErr  error
}

// Benchmarking reports whether -test.bench asks for benchmarks.
func Benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

// Main is the body of a suite's TestMain: it starts the control plane into
// s, runs run (which sets up what the suite adds, calls m.Run and returns
// its code; nil is m.Run alone) with a context that ends when Main
// returns, and stops the control plane. Without KUBEBUILDER_ASSETS (and no
// existing cluster) it starts nothing and runs m.Run alone: every test
// that needs the control plane skips. With it, an unusable control plane
// fails the run.
func (s *Suite) Main(m *testing.M, opts Options, run func(ctx context.Context, m *testing.M) int) int {
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background()) //nolint:forbidigo // TestMain has no t.Context
	defer cancel()
	if err := s.start(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	if s.Skipped() {
		return m.Run()
	}
	defer s.Stop()
	if run == nil {
		return m.Run()
	}
	return run(ctx, m)
}

// start starts the control plane, or records why it does not.
func (s *Suite) start(ctx context.Context, opts Options) error {
	s.Scheme = runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s.Scheme); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(s.Scheme); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("USE_EXISTING_CLUSTER") != "true" {
		s.skipReason = "KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>"
		return nil
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		_ = os.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	s.Env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(opts.Root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if opts.Webhook {
		// The API server calls the webhook on 127.0.0.1; a suite may
		// serve it with the operator's own certificates instead of
		// envtest's.
		s.Env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths:            []string{filepath.Join(opts.Root, "config", "webhook", "manifests.yaml")},
			LocalServingHost: "127.0.0.1",
		}
	}
	cfg, err := s.Env.Start()
	if err != nil {
		return fmt.Errorf("envtest: starting the control plane: %w", err)
	}
	s.AdminConfig = cfg
	s.Admin, err = client.New(cfg, client.Options{Scheme: s.Scheme})
	if err != nil {
		s.Stop()
		return fmt.Errorf("client: %w", err)
	}
	if err := s.installRBAC(ctx, opts.Root); err != nil {
		s.Stop()
		return fmt.Errorf("installing config/rbac: %w", err)
	}
	s.OperatorConfig = rest.CopyConfig(cfg)
	s.OperatorConfig.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + OperatorNamespace + ":" + OperatorSA}
	s.OperatorConfig.QPS = -1 // as ctrl.GetConfig: API priority and fairness, no client-side limit
	return nil
}

// Skipped reports whether Start started no control plane.
func (s *Suite) Skipped() bool { return s.skipReason != "" }

// Stop stops the kube-controller-manager, if one was started, and the
// control plane. It reports a failure to stop on stderr: the tests have
// run by then.
func (s *Suite) Stop() {
	if s.kcmProc != nil {
		_ = s.kcmProc.Stop()
	}
	if s.Env == nil {
		return
	}
	if err := s.Env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "envtest: stopping the control plane: %v\n", err)
	}
}

// installRBAC applies config/rbac (ServiceAccount, the generated
// ClusterRole, bindings, leader-election Role) as the operator's install
// would.
func (s *Suite) installRBAC(ctx context.Context, root string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}}
	if err := s.Admin.Create(ctx, ns); err != nil {
		return fmt.Errorf("namespace %s: %w", OperatorNamespace, err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "rbac", "*.yaml"))
	if err != nil {
		return fmt.Errorf("config/rbac: %w", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
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
			if err := s.Admin.Create(ctx, u); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

// NeedControlPlane skips the test when there is no control plane.
func (s *Suite) NeedControlPlane(t testing.TB) {
	t.Helper()
	if s.skipReason != "" {
		t.Skip(s.skipReason)
	}
}

// NeedKCM starts the suite's kube-controller-manager (Deployments become
// ReplicaSets and Pods, ServiceAccount tokens are minted) on the first
// call; later calls share it. Stop stops it.
func (s *Suite) NeedKCM(t testing.TB) {
	t.Helper()
	s.NeedControlPlane(t)
	s.kcmOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) //nolint:forbidigo // outlives the first test that asks
		defer cancel()
		s.kcmProc, s.kcmErr = kcm.Start(ctx, s.AdminConfig, nil)
	})
	if s.kcmErr != nil {
		t.Fatal(s.kcmErr)
	}
}

// NewNamespace creates a namespace for one test.
func (s *Suite) NewNamespace(t testing.TB) string {
	t.Helper()
	s.NeedControlPlane(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sc-"}}
	if err := s.Admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// Create creates obj as Admin.
func (s *Suite) Create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := s.Admin.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// Update applies change to the latest copy of the ServiceContract.
func (s *Suite) Update(t testing.TB, key client.ObjectKey, change func(*v1alpha1.ServiceContract)) {
	t.Helper()
	for range 10 {
		sc := &v1alpha1.ServiceContract{}
		if err := s.Admin.Get(t.Context(), key, sc); err != nil {
			t.Fatal(err)
		}
		change(sc)
		err := s.Admin.Update(t.Context(), sc)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatalf("updating %s: conflicts", key)
}

// WaitFor polls the ServiceContract until cond holds for it, and returns it.
// The deadline bounds a hung reconciler; it measures nothing.
func (s *Suite) WaitFor(t testing.TB, key client.ObjectKey, what string, cond func(*v1alpha1.ServiceContract) bool) *v1alpha1.ServiceContract {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	sc := &v1alpha1.ServiceContract{}
	for {
		if err := s.Admin.Get(t.Context(), key, sc); err != nil {
			t.Fatal(err)
		}
		if cond(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: waited 60s for %s; status: %s", key, what, Describe(sc))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// EventReasons lists the reasons of the Events (events.k8s.io) regarding
// the ServiceContract ns/name.
func (s *Suite) EventReasons(t testing.TB, ns, name string) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := s.Admin.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
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

// NewContract is a ServiceContract for the bundle ref, targeting the
// Deployment target.
func NewContract(ns, name, ref, target string) *v1alpha1.ServiceContract {
	return &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ServiceContractSpec{
			Bundle:    v1alpha1.BundleSource{OCI: ref},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: target},
		},
	}
}

// Describe is the ServiceContract's status for a failure message.
func Describe(sc *v1alpha1.ServiceContract) string {
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

// Condition returns the condition's status and reason ("" when absent).
func Condition(sc *v1alpha1.ServiceContract, typ string) (metav1.ConditionStatus, string) {
	for _, c := range sc.Status.Conditions {
		if c.Type == typ {
			return c.Status, c.Reason
		}
	}
	return "", ""
}

// IsReady reports whether the ServiceContract is Ready and its status
// observed its current generation.
func IsReady(sc *v1alpha1.ServiceContract) bool {
	s, _ := Condition(sc, v1alpha1.ConditionReady)
	return s == metav1.ConditionTrue && sc.Status.ObservedGeneration == sc.Generation
}
