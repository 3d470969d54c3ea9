package controllers_test

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// The package's control plane: one real kube-apiserver and etcd for all
// tests (test/envtestsuite), and one manager running the reconciler as the
// operator's ServiceAccount, bound to the ClusterRole `make manifests`
// generated. (The webhook's tests run on a control plane of their own, in
// controllers/injection.)
var suite = new(envtestsuite.Suite)

const (
	operatorNamespace = envtestsuite.OperatorNamespace
	operatorSA        = envtestsuite.OperatorSA
)

func TestMain(m *testing.M) {
	os.Exit(suite.Main(m, envtestsuite.Options{Root: ".."}, func(ctx context.Context, m *testing.M) int {
		if envtestsuite.Benchmarking() {
			// The benchmark runs its own manager over its own objects.
			return m.Run()
		}
		return suite.RunOperator(ctx, m, nil, nil)
	}))
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
	if err := suite.Admin.Create(t.Context(), d); err != nil {
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
