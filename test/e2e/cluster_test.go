//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The cluster back end's settings (hack/e2e-kind.sh sets them).
const (
	// registryEnv is the registry the test pushes to (host:port), and
	// registryClusterEnv the same registry as Pods reach it (default: the
	// same).
	registryEnv        = "KUBEPACT_E2E_REGISTRY"
	registryClusterEnv = "KUBEPACT_E2E_REGISTRY_CLUSTER"
	// demoImageEnv is an image of hack/demoservice, loaded into the
	// cluster, serving on 8080.
	demoImageEnv = "KUBEPACT_E2E_DEMO_IMAGE"
	// grpcImageEnv is an image of hack/grpcdemo with the example's .proto
	// files in /proto, loaded into the cluster (hack/realnode sets it;
	// without it the gRPC step is skipped).
	grpcImageEnv = "KUBEPACT_E2E_GRPC_IMAGE"
)

// clusterBackend runs the story on an existing cluster ($KUBECONFIG) where
// the chart is installed as release kubepact in kubepact-system (by
// hack/e2e-kind.sh); it reaches every endpoint with kubectl port-forward.
type clusterBackend struct {
	root      *testing.T
	c         client.Client
	kubectl   string
	push      string
	pull      string
	demoImage string

	mu          sync.Mutex
	mcpURLCache string
	forward     []*exec.Cmd
}

func newClusterBackend(t *testing.T) *clusterBackend {
	t.Helper()
	b := &clusterBackend{root: t, kubectl: os.Getenv("KUBECTL"), push: os.Getenv(registryEnv),
		pull: os.Getenv(registryClusterEnv), demoImage: os.Getenv(demoImageEnv)}
	if b.kubectl == "" {
		b.kubectl = "kubectl"
	}
	if b.push == "" || b.demoImage == "" {
		t.Fatalf("%s=cluster needs %s (the registry the test pushes to) and %s (the demo service's image); hack/e2e-kind.sh sets them", ModeEnv, registryEnv, demoImageEnv)
	}
	if b.pull == "" {
		b.pull = b.push
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		t.Fatalf("%s=cluster: no cluster configuration ($KUBECONFIG): %v", ModeEnv, err)
	}
	if b.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, f := range b.forward {
			_ = f.Process.Signal(syscall.SIGTERM)
			_ = f.Wait()
		}
	})
	return b
}

func (b *clusterBackend) admin() client.Client { return b.c }

func (b *clusterBackend) registry() (string, string) { return b.push, b.pull }

func (b *clusterBackend) served() int { return -1 }

func (b *clusterBackend) grpcServed() int { return -1 }

// grpcContainer serves the demo gRPC service on the Pod's loopback, where
// its sidecar calls it: nothing else can.
func (b *clusterBackend) grpcContainer(*testing.T) (corev1.Container, string) {
	img := os.Getenv(grpcImageEnv)
	if img == "" {
		return corev1.Container{}, grpcImageEnv + " is not set: no image of hack/grpcdemo is loaded into this cluster (hack/realnode/e2e.sh loads one)"
	}
	return corev1.Container{
		Name: "inventory", Image: img, ImagePullPolicy: corev1.PullIfNotPresent,
		Args:  []string{"--listen", "127.0.0.1:9090", "--proto", "/proto/inventory.proto"},
		Ports: []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9090}},
	}, ""
}

func (b *clusterBackend) demoContainer(*testing.T) corev1.Container {
	return corev1.Container{
		Name: "catalog", Image: b.demoImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Args:  []string{"--listen", "0.0.0.0:8080"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
	}
}

// shell: the README's commands run against $KUBECONFIG with kubectl and
// helm as this back end has them; a kind node has a kubelet, so every
// command runs.
func (b *clusterBackend) shell(t *testing.T) shellHost {
	t.Helper()
	kc := os.Getenv("KUBECONFIG")
	if kc == "" {
		t.Fatalf("%s=cluster runs the README's commands against $KUBECONFIG, which is not set (hack/e2e-kind.sh sets it)", ModeEnv)
	}
	return shellHost{kubeconfig: kc, kubectl: b.kubectl, helm: helmBinCluster(), skip: func(string) string { return "" }}
}

// cannotInstall: the script that made the cluster (hack/e2e-kind.sh or
// hack/realnode/e2e.sh) installs the chart itself.
func (b *clusterBackend) cannotInstall() string {
	if os.Getenv("KUBEPACT_E2E_NODE") != "" {
		return "hack/realnode/e2e.sh installed the chart: the real node imports the image with ctr instead of pulling it from a registry, so the README's image, install and upgrade commands are the script's there (envtest runs them)"
	}
	return "hack/e2e-kind.sh installed the chart: kind loads the image into its node instead of pulling it from a registry the node reaches, so the README's image, install and upgrade commands are the script's there (envtest runs them)"
}

// installed reads what `helm install` (run by hack/e2e-kind.sh) installed.
func (b *clusterBackend) installed(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return releaseObjects(t, helmBinCluster(), nil)
}

func (b *clusterBackend) beforeUpgrade(t *testing.T) {
	t.Helper()
	t.Fatal("the cluster back end does not run the README's upgrade (cannotInstall)")
}

func (b *clusterBackend) upgraded(t *testing.T) {
	t.Helper()
	t.Fatal("the cluster back end does not run the README's upgrade (cannotInstall)")
}

// realPods: the cluster's kubelet runs the Pods.
func (b *clusterBackend) realPods() string { return "" }

func (b *clusterBackend) forwardPort(t *testing.T, ns, target, port string) string {
	t.Helper()
	return b.portForward(t, target, ns, port)
}

// operatorGone: the cluster stops the operator's Pods itself.
func (b *clusterBackend) operatorGone(*testing.T) {}

// mcpURL: the README's own port-forward ran here.
func (b *clusterBackend) mcpURL(_ *testing.T, readmeURL string) string { return readmeURL }

func (b *clusterBackend) cli(t *testing.T) string { return kubepact(t) }

// helmBinCluster is helm from $KUBEPACT_HELM, else the one on PATH.
func helmBinCluster() string {
	if p := os.Getenv(helmEnv); p != "" {
		return p
	}
	return "helm"
}

func (b *clusterBackend) waitOperatorReady(t *testing.T) {
	t.Helper()
	d := &appsv1.Deployment{}
	eventually(t, "Deployment "+operatorName+" available", 180*time.Second, func() error {
		if err := b.c.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, d); err != nil {
			return err
		}
		if d.Spec.Replicas == nil || d.Status.AvailableReplicas < *d.Spec.Replicas || d.Status.ObservedGeneration < d.Generation {
			return fmt.Errorf("%d/%d available", d.Status.AvailableReplicas, ptrOr(d.Spec.Replicas, 1))
		}
		return nil
	})
	// /readyz through the port the readiness probe uses.
	c := d.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil {
		t.Fatalf("Deployment %s has no HTTP readiness probe", operatorName)
	}
	port := c.ReadinessProbe.HTTPGet.Port.String()
	for _, p := range c.Ports {
		if p.Name == port {
			port = fmt.Sprint(p.ContainerPort)
		}
	}
	local := b.portForward(t, "deploy/"+operatorName, installNamespace, port)
	waitHTTP200(t, "http://"+local+c.ReadinessProbe.HTTPGet.Path, nil)
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// operatorMCP port-forwards to the Service's mcp port, as the chart's
// NOTES tell users to.
func (b *clusterBackend) operatorMCP(t *testing.T) string {
	t.Helper()
	b.mu.Lock()
	url := b.mcpURLCache
	b.mu.Unlock()
	if url != "" {
		return url
	}
	svc := &corev1.Service{}
	if err := b.c.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, svc); err != nil {
		t.Fatal(err)
	}
	port := ""
	for _, p := range svc.Spec.Ports {
		if p.Name == "mcp" {
			port = fmt.Sprint(p.Port)
		}
	}
	if port == "" {
		t.Fatalf("Service %s has no port named mcp: %+v", operatorName, svc.Spec.Ports)
	}
	url = "http://" + b.portForward(t, "svc/"+operatorName, installNamespace, port) + "/mcp"
	b.mu.Lock()
	b.mcpURLCache = url
	b.mu.Unlock()
	return url
}

// sidecar waits for the Pod to be Ready (its sidecar's startup and
// readiness probes passed on the kubelet) and port-forwards to the
// sidecar's mcp port.
func (b *clusterBackend) sidecar(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	c := injectedSidecar(t, pod)
	eventually(t, "Pod "+pod.Name+" Ready", 180*time.Second, func() error {
		p := &corev1.Pod{}
		if err := b.c.Get(t.Context(), client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("phase %s, init %+v", p.Status.Phase, p.Status.InitContainerStatuses)
	})
	port := ""
	for _, p := range c.Ports {
		if p.Name == "mcp" {
			port = fmt.Sprint(p.ContainerPort)
		}
	}
	return "http://" + b.portForward(t, "pod/"+pod.Name, pod.Namespace, port) + "/mcp"
}

var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) ->`)

// portForward runs `kubectl port-forward` to target's remote port and
// returns the local address once it forwards.
func (b *clusterBackend) portForward(t *testing.T, target, ns, remote string) string {
	t.Helper()
	cmd := exec.Command(b.kubectl, "port-forward", "--address", "127.0.0.1", "-n", ns, target, ":"+remote)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("kubectl port-forward: %v", err)
	}
	b.mu.Lock()
	b.forward = append(b.forward, cmd)
	b.mu.Unlock()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwarding.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- "127.0.0.1:" + m[1]:
				default:
				}
			}
		}
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(60 * time.Second):
		t.Fatalf("kubectl port-forward %s/%s :%s did not forward: %s", ns, target, remote, strings.TrimSpace(stderr.String()))
	}
	return ""
}
