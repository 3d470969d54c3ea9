package controllers_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// The package's control plane: one real kube-apiserver and etcd for all
// tests (test/envtestsuite), and one manager running the reconciler as the
// operator's ServiceAccount, bound to the ClusterRole `make manifests`
// generated. (The webhook's tests run on a control plane of their own, in
// controllers/injection.)
var (
	suite *envtestsuite.Suite
	// admin is a client with the test's full authority, for setting up.
	admin client.Client
	// adminConfig is the rest.Config of admin.
	adminConfig *rest.Config
	// operatorConfig is the rest.Config the manager runs with: the
	// operator's ServiceAccount, impersonated.
	operatorConfig *rest.Config
	scheme         *runtime.Scheme
)

const (
	operatorNamespace = envtestsuite.OperatorNamespace
	operatorSA        = envtestsuite.OperatorSA
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background()) //nolint:forbidigo // TestMain has no t.Context
	defer cancel()
	var err error
	suite, err = envtestsuite.Start(ctx, envtestsuite.Options{Root: ".."})
	if err != nil {
		// KUBEBUILDER_ASSETS was set: an unusable control plane is a failure.
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	scheme = suite.Scheme
	if suite.Skipped() {
		return m.Run()
	}
	defer suite.Stop()
	admin, adminConfig, operatorConfig = suite.Admin, suite.AdminConfig, suite.OperatorConfig
	if envtestsuite.Benchmarking() {
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
